"""Hyperparameter validation: every learner checks every hyperparameter against its
declared constraints at the start of ``fit`` (before the task or the data are looked at)
and in ``check_compatible`` (so ``latentstruct train`` refuses a bad option before reading
data), with scikit-learn's wording."""

import re

import numpy as np
import pytest

from latentstruct.cli import main
from latentstruct.exceptions import ConfigError
from latentstruct.learners import JLIS, LCLR, LEARNERS, check_compatible
from latentstruct.tasks import ChunkTask
from latentstruct.testing import make_bag_problem

INT_0_2_32 = "must be an int in the range [0, 4294967295]"
NJOBS = "must be an int in the range [-1024, 1024] other than 0 or None"
POSITIVE = "must be a float in the range (0, inf)"
NONNEG = "a float in the range [0, inf)"  # "must be a float ..." or "must be a str among {...} or a float ..."
AT_LEAST_ONE = "must be an int in the range [1, "  # [1, inf) or [1, LIMIT]
BOOL = "must be a bool"
STR_AMONG = "must be a str among {"

# (parameter, bad value, fragment of the message); applied to every learner that has it
BAD = [
    ("random_state", -1, INT_0_2_32), ("random_state", "abc", INT_0_2_32),
    ("random_state", 1.5, INT_0_2_32), ("random_state", 2 ** 32, INT_0_2_32),
    ("random_state", True, INT_0_2_32),
    ("n_jobs", 0, NJOBS), ("n_jobs", "abc", NJOBS), ("n_jobs", 1.5, NJOBS),
    ("n_jobs", False, NJOBS),
    ("C", 0, POSITIVE), ("C", -1.0, POSITIVE), ("C", "abc", POSITIVE),
    ("C", float("nan"), POSITIVE), ("C", float("inf"), POSITIVE), ("C", True, POSITIVE),
    ("C1", 0.0, POSITIVE), ("C2", -0.5, POSITIVE),
    ("dcd_tol", 0, POSITIVE), ("inner_tol", -1e-3, POSITIVE), ("eta0", "fast", "'eta0'"),
    ("alpha", -1e-3, NONNEG), ("lambda1", -0.1, NONNEG), ("lambda2", "x", NONNEG),
    ("epsilon", -0.01, NONNEG), ("init_noise", -1.0, NONNEG),
    ("tol", -1.0, "'tol' parameter"), ("tol", "small", "'tol' parameter"),
    ("max_iter", 0, AT_LEAST_ONE), ("max_iter", 2.5, AT_LEAST_ONE),
    ("max_iter", "10", AT_LEAST_ONE), ("n_epochs", 0, AT_LEAST_ONE),
    ("batch_size", 0, AT_LEAST_ONE), ("dcd_max_iter", -3, AT_LEAST_ONE),
    ("max_cutting_plane_rounds", 0, AT_LEAST_ONE), ("max_negative_updates", 0, AT_LEAST_ONE),
    ("n_components", 0, AT_LEAST_ONE), ("n_restarts", 1.0, AT_LEAST_ONE),
    ("n_iter", -1, "must be an int in the range [0, 10000]"),
    ("check_inference", "yes", BOOL), ("progress", 1, BOOL), ("average", "no", BOOL),
    ("random_tie_break", 0, BOOL), ("shrinking", "true", BOOL), ("update_labels", None, BOOL),
    ("init", "random", STR_AMONG), ("variant", "pa-iv", STR_AMONG),
    ("solver", "adam", STR_AMONG), ("normalization", "l2", STR_AMONG),
    ("threshold", "soft", STR_AMONG), ("label_init", "zeros", STR_AMONG),
    ("schedule", "cosine", STR_AMONG), ("heuristic_scale", "big", "'heuristic_scale'"),
    ("callback", "print", "must be a callable or None"),
    ("coef_init", "w.npy", "coef_init must be an array of"),
    ("coef_init", [[1.0, 2.0]], "'coef_init' parameter"),
]

CASES = [(name, param, value, fragment) for name, cls in sorted(LEARNERS.items())
         for param, value, fragment in BAD if param in cls().get_params()]


def test_the_table_covers_every_learner_and_every_parameter():
    assert {name for name, *_ in CASES} == set(LEARNERS)
    for name, cls in LEARNERS.items():
        params = set(cls().get_params()) - {"structure"}
        assert params <= set(cls._parameter_constraints), name
        cls.validate_params(cls().get_params())  # the defaults are valid
    # every common hyperparameter is exercised for every learner that has it
    for param in ("random_state", "n_jobs", "C", "max_iter", "coef_init", "check_inference"):
        having = {n for n, c in LEARNERS.items() if param in c().get_params()}
        assert having == {n for n, p, *_ in CASES if p == param}, param


@pytest.mark.parametrize("name, param, value, fragment", CASES,
                         ids=[f"{n}-{p}={v!r}" for n, p, v, _ in CASES])
def test_a_bad_value_is_refused_with_the_learners_name(name, param, value, fragment):
    cls = LEARNERS[name]
    # without a task or data: the check needs neither, and comes first in fit
    with pytest.raises(ConfigError) as err:
        cls(**{param: value}).fit(None, None)
    message = str(err.value)
    assert fragment in message
    if param != "coef_init" or not isinstance(value, str):
        assert message.startswith(f"The '{param}' parameter of {cls.__name__} must be ")
        assert message.endswith(f"Got {value!r} instead.")
    # the same check runs in check_compatible, before any data is read
    with pytest.raises(ConfigError, match=re.escape(fragment)):
        check_compatible(ChunkTask, {}, cls, {param: value})


def test_the_message_is_scikit_learns():
    with pytest.raises(ConfigError) as err:
        LCLR(n_jobs="abc").fit(None, None)
    assert str(err.value) == ("The 'n_jobs' parameter of LCLR must be an int in the range "
                              "[-1024, 1024] other than 0 or None. Got 'abc' instead.")
    with pytest.raises(ConfigError) as err:
        LCLR(random_state=-1).fit(None, None)
    assert str(err.value) == ("The 'random_state' parameter of LCLR must be an int in the range "
                              "[0, 4294967295], a numpy Generator or None. Got -1 instead.")


@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_good_values_pass(name):
    cls = LEARNERS[name]
    params = cls().get_params()
    good = {"random_state": 2 ** 32 - 1, "n_jobs": -1, "C": 3, "max_iter": np.int64(4),
            "check_inference": np.bool_(False), "progress": True, "tol": 1e-9,
            "coef_init": np.zeros(3)}
    cls.validate_params({k: v for k, v in good.items() if k in params})
    if "n_jobs" in params:
        cls.validate_params({"n_jobs": None})
    if cls._parameter_constraints.get("random_state", [None])[-1] is None:
        cls.validate_params({"random_state": None})
        cls.validate_params({"random_state": np.random.default_rng(0)})


def test_coef_init_message_knows_the_number_of_weights():
    task, X, y = make_bag_problem(n_examples=10, random_state=0)
    with pytest.raises(ConfigError, match="coef_init must be an array of 5 floats; it cannot be "
                                          "given on the command line"):
        LCLR(task, coef_init="w.npy").fit(X, y)
    with pytest.raises(ConfigError, match="coef_init must have shape \\(5,\\)"):
        LCLR(task, coef_init=np.zeros(4)).fit(X, y)


def test_jlis_counts_the_bias_weight(tmp_path):
    path = tmp_path / "t.txt"
    path.write_text("a X B-A\nb Y O\n\n", encoding="utf-8")
    task = ChunkTask(window=0, affix_length=1)
    ds = task.read(path)
    task.fit(ds)
    n = task.n_features + 1
    with pytest.raises(ConfigError, match=f"coef_init must be an array of {n} floats"):
        JLIS(task, coef_init="w.npy").fit(task.featurize(ds), task.encode_targets(ds.targets))


@pytest.mark.parametrize("task, learner, option, fragment", [
    ("chunk", None, "n_jobs=abc", "The 'n_jobs' parameter of StructuredSVM " + NJOBS),
    ("chunk", None, "n_jobs=0", NJOBS),
    ("chunk", None, "random_state=-1", INT_0_2_32),
    ("chunk", None, "random_state=1.5", INT_0_2_32),
    ("chunk", None, "random_state=abc", INT_0_2_32),
    ("chunk", "perceptron", "average=maybe", "The 'average' parameter of StructuredPerceptron"),
    ("chunk", "distro", "threshold=soft", STR_AMONG),
    ("chunk", "sgd-ssvm", "lambda1=-1", NONNEG),
    ("chunk", "pa", "pa_type=3", "The 'pa_type' parameter of StructuredPA must be an int in "
                                 "the range [0, 2]"),
    ("chunk", "arow", "gamma=0", "The 'gamma' parameter of AROW " + POSITIVE),
    ("translit", None, "coef_init=w.npy",
     "coef_init must be an array of n_features floats; it cannot be given on the command line"),
    ("translit", "latent-pa", "C=0", POSITIVE),
    ("rerank", None, "alpha=-0.5", NONNEG),
])
def test_the_cli_refuses_a_bad_option_before_reading_data(tmp_path, capsys, task, learner,
                                                          option, fragment):
    missing = tmp_path / "no-such-file.txt"
    args = ["train", task, "--train", str(missing), "--model", str(tmp_path / "m.npz"),
            "--option", option, "--quiet"] + (["--learner", learner] if learner else [])
    assert main(args) == 2
    err = capsys.readouterr().err
    assert fragment in err and "no-such-file" not in err, err
    assert not (tmp_path / "m.npz").exists()


# every bounded count of every learner: its limit is accepted, one more is refused with
# scikit-learn's message and what the value would cost (latentstruct.limits)
BOUNDED = [(name, param, c.bound) for name, cls in sorted(LEARNERS.items())
           for param, allowed in sorted(cls._parameter_constraints.items())
           for c in allowed if getattr(c, "bound", None) is not None]


def test_every_count_that_sizes_memory_or_time_is_bounded():
    from latentstruct.learners.params import Interval

    for name, cls in LEARNERS.items():
        for param, allowed in cls._parameter_constraints.items():
            for c in allowed:
                if isinstance(c, Interval) and c.kind is int and c.high is None:
                    # the only unbounded counts: batch and sample sizes (capped by the
                    # data) and seeds
                    assert param in ("batch_size", "calibration_samples"), (name, param)
    assert {p for _, p, _ in BOUNDED} >= {"max_iter", "n_jobs", "n_epochs", "dcd_max_iter",
                                          "n_components", "max_weights", "inner_max_iter"}


@pytest.mark.parametrize("name, param, bound", BOUNDED,
                         ids=[f"{n}-{p}" for n, p, _ in BOUNDED])
def test_a_value_over_the_bound_says_what_it_would_cost(name, param, bound):
    cls = LEARNERS[name]
    cls.validate_params({param: bound.high})
    over = bound.high * 1000
    with pytest.raises(ConfigError) as err:
        check_compatible(ChunkTask, {}, cls, {param: over})
    message = str(err.value)
    assert message.startswith(f"The {param!r} parameter of {cls.__name__} must be ")
    assert f"Got {over} instead: " in message and f"at {param}={over:,}" in message
    assert f"{bound.high:,} already takes" in message


# --- checked once per fit (latentstruct.params.fit_context) ------------------------------
SENTENCES = [["The", "cat", "sat"], ["A", "dog", "ran"]]
TAGS = [["DET", "NOUN", "VERB"], ["DET", "NOUN", "VERB"]]


def _validations(monkeypatch) -> list:
    """The owners named by every run of ``params.validate_params`` from now on (patched in
    every module of the package that imported it by name)."""
    import sys

    import latentstruct.params as params_module

    real, owners = params_module.validate_params, []

    def counted(owner, *args, **kwargs):
        owners.append(owner)
        return real(owner, *args, **kwargs)

    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith("latentstruct") and \
                getattr(module, "validate_params", None) is real:
            monkeypatch.setattr(module, "validate_params", counted)
    return owners


def test_an_estimator_checks_every_value_once_on_entering_fit(monkeypatch):
    from latentstruct import Tagger

    owners = _validations(monkeypatch)
    with pytest.warns(Warning):  # max_iter=2 does not converge
        Tagger(C=0.5, max_iter=2).fit(SENTENCES, TAGS)
    # the task's values (its featurizer's come from them) and the learner's, once each;
    # the nested fits (task, featurizer, vocabulary, learner) check nothing again
    assert sorted(owners) == ["StructuredSVM", "the 'pos' task"]
    with pytest.raises(ConfigError, match="The 'C' parameter of StructuredSVM"):
        Tagger(C=-1.0).fit(SENTENCES, TAGS)
    with pytest.raises(ConfigError, match="The 'window' parameter of the 'pos' task"):
        Tagger(window=-1).fit(SENTENCES, TAGS)


def test_a_task_a_learner_or_a_featurizer_used_alone_checks_on_entering_its_fit(monkeypatch):
    from latentstruct.featurizers import TokenTemplates, Vocabulary
    from latentstruct.learners import StructuredSVM

    task = ChunkTask(window=0, affix_length=1)
    data = task.make_dataset([[("He", "PRP"), ("ran", "VBD")]], [["B-NP", "B-VP"]])
    owners = _validations(monkeypatch)
    task.fit(data)
    assert owners == ["the 'chunk' task"]  # not its featurizer's, built from those values
    with pytest.raises(ConfigError, match="The 'min_count' parameter of the 'chunk' task"):
        ChunkTask(min_count=0).fit(data)
    X, Y = task.featurize(data), task.encode_targets(data.targets)
    with pytest.raises(ConfigError, match="The 'C' parameter of StructuredSVM"):
        StructuredSVM(task.structure(), C=0).fit(X, Y)
    with pytest.raises(ConfigError, match="The 'min_count' parameter of Vocabulary"):
        Vocabulary(min_count=0).fit([["a"]])
    with pytest.raises(ConfigError, match="The 'window' parameter of TokenTemplates"):
        TokenTemplates(window=-1).fit_transform([["a"]])


def test_nested_validation_is_skipped_and_a_files_values_are_always_checked():
    from latentstruct.learners import StructuredSVM
    from latentstruct.params import parameter_validation_skipped, skip_parameter_validation

    assert not parameter_validation_skipped()
    with skip_parameter_validation():
        assert parameter_validation_skipped()
        StructuredSVM(C=-1.0).check_params()  # inside a fit that checked: nothing
        ChunkTask(min_count=0).check_params()
        with skip_parameter_validation(False):  # a model file's values: always
            with pytest.raises(ConfigError, match="The 'C' parameter of StructuredSVM"):
                StructuredSVM(C=-1.0).check_params()
    assert not parameter_validation_skipped()
