"""How narrow the core is: the table of issue 53, measured (docs/design.md shows it).

    python experiments/core_metrics.py            # one JSON object, ~1 min
    python experiments/core_metrics.py --table    # the markdown rows of docs/design.md

Rows (each measured here, nothing hard-coded):

* ``pos_task_callables``: callables on ``PosTask`` defined by the package's own classes
  (methods, class and static methods; properties counted apart);
* ``grammaticality_methods`` / ``grammaticality_params``: likewise for ``GrammaticalityTask``,
  and its constructor's parameters;
* ``contract_members`` / ``members_learners_touch``: the members a learner may touch on its
  structure (``tasks.contracts.learner_members``) and those the learners' source touches
  (the static scan of ``tests/test_layering.py``);
* ``structure_members_pos_ssvm``: the members of the structure a ``Tagger().fit`` hands its
  learner (the view's), and ``runtime_structure_members``: those the learners used in three
  small fits (pos ssvm, chunk crf, chunk perceptron), through a recording proxy;
* ``validate_params_runs``: calls of ``latentstruct.params.validate_params`` in one
  ``Tagger(C=0.5).fit``, by the caller's module; ``check_positive_calls``: of the hand-written
  ``check_positive*`` helpers;
* ``fitted_checks``: calls of the fitted checks (``check_is_fitted``, ``is_fitted``,
  ``check_fitted``, ``_check_is_fitted``, ``_check_fitted``) in one small ``Tagger().fit``;
* ``modules_per_tagger_fit``: the package's modules whose code runs in one ``Tagger().fit``;
* ``pystruct_lines``: lines of ``src/latentstruct/pystruct``.
"""

from __future__ import annotations

import argparse
import collections
import inspect
import json
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "src" / "latentstruct"

SENTENCES = [["The", "cat", "sat", "on", "the", "mat", "."], ["A", "dog", "barked", "."],
             ["Cats", "like", "fish", "."], ["The", "dog", "sat", "."]] * 3
TAGS = [["DET", "NOUN", "VERB", "ADP", "DET", "NOUN", "PUNCT"], ["DET", "NOUN", "VERB", "PUNCT"],
        ["NOUN", "VERB", "NOUN", "PUNCT"], ["DET", "NOUN", "VERB", "PUNCT"]] * 3
CHUNKS = [[("The", "DT"), ("cat", "NN"), ("sat", "VBD")], [("A", "DT"), ("dog", "NN")]] * 4
CHUNK_TAGS = [["B-NP", "I-NP", "B-VP"], ["B-NP", "I-NP"]] * 4


def own_callables(cls) -> tuple[int, int]:
    """(callables, properties) that the package's own classes in ``cls``'s MRO define."""
    names, props = set(), set()
    for klass in cls.__mro__:
        if not klass.__module__.startswith("latentstruct"):
            continue
        for name, value in vars(klass).items():
            if name.startswith("__") and name.endswith("__"):
                continue
            if isinstance(value, property):
                props.add(name)
            elif isinstance(value, type):
                continue  # a class the task names (structure_class), data, not a method
            elif callable(value) or isinstance(value, (classmethod, staticmethod)):
                names.add(name)
    return len(names - props), len(props)


def static_members() -> tuple[int, int]:
    sys.path.insert(0, str(ROOT / "tests"))
    from test_layering import LEARNERS_DIR, task_members_touched

    from latentstruct.tasks.contracts import learner_members

    touched = set()
    for path in sorted(LEARNERS_DIR.rglob("*.py")):
        touched |= {m for m in task_members_touched(path.read_text(encoding="utf-8"))
                    if not m.startswith("__")}
    return len(learner_members()), len(touched)


def counting(module, name, counter, key=None):
    original = getattr(module, name)
    if getattr(original, "__wrapped_counter__", None) is counter:  # counted already
        return original

    def wrapper(*args, **kwargs):
        caller = sys._getframe(1).f_globals.get("__name__", "?")
        counter[key or name][caller] += 1
        return original(*args, **kwargs)

    wrapper.__wrapped_counter__ = counter
    setattr(module, name, wrapper)
    return original


def runtime_counts() -> dict:
    import latentstruct.params as params_module
    from latentstruct import Tagger

    with warnings.catch_warnings():  # import (and compile) everything a fit uses first
        warnings.simplefilter("ignore")
        Tagger(C=0.5, max_iter=3).fit(SENTENCES, TAGS)
    counts: dict = collections.defaultdict(collections.Counter)
    patched = []
    # every module that imported validate_params by name, and the module itself
    the_function = params_module.validate_params
    for mod in list(sys.modules.values()):
        if getattr(mod, "__name__", "").startswith("latentstruct") and \
                getattr(mod, "validate_params", None) is the_function:
            patched.append((mod, counting(mod, "validate_params", counts)))
    for mod in list(sys.modules.values()):
        name = getattr(mod, "__name__", "")
        if not name.startswith("latentstruct"):
            continue
        for helper in ("check_positive", "check_positive_int", "check_nonnegative"):
            if callable(getattr(mod, helper, None)):
                counting(mod, helper, counts, "check_positive*")
    fitted = collections.Counter()
    modules = set()
    fitted_names = {"check_is_fitted", "is_fitted", "check_fitted", "_check_is_fitted",
                    "_check_fitted"}

    def profile(frame, event, arg):
        if event != "call":
            return
        code = frame.f_code
        if code.co_filename.startswith(str(PKG)):
            modules.add(code.co_filename)
            if code.co_name in fitted_names:
                fitted[code.co_name] += 1

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sys.setprofile(profile)
        try:
            Tagger(C=0.5, max_iter=3).fit(SENTENCES, TAGS)
        finally:
            sys.setprofile(None)
    validate = {k: sum(v.values()) for k, v in counts.items()}
    by_caller = dict(counts.get("validate_params", {}))
    return {"validate_params_runs": validate.get("validate_params", 0),
            "validate_params_by_caller": by_caller,
            "check_positive_calls": validate.get("check_positive*", 0),
            "fitted_checks": sum(fitted.values()), "fitted_check_names": len(fitted),
            "modules_per_tagger_fit": len(modules)}


def runtime_structure_members() -> dict:
    """The members of the structure the learners used in three small fits (a recording
    proxy around each view)."""
    from latentstruct import Chunker, Tagger
    from latentstruct.pipelines import training

    used: set = set()
    original = training.build_learner

    class Recorder:
        def __init__(self, inner):
            object.__setattr__(self, "_inner", inner)

        def __getattr__(self, name):
            used.add(name)
            return getattr(self._inner, name)

        def __reduce__(self):
            return (lambda x: x, (self._inner,))

    def build(task, learner_cls, learner_opts, *, verbose=False):
        learner = original(task, learner_cls, learner_opts, verbose=verbose)
        learner.set_params(structure=Recorder(task.structure()))
        return learner

    training.build_learner = build
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            view = Tagger(max_iter=2).fit(SENTENCES, TAGS).task_.structure()
            Chunker(learner="crf", max_iter=3).fit(CHUNKS, CHUNK_TAGS)
            Chunker(learner="perceptron", max_iter=2).fit(CHUNKS, CHUNK_TAGS)
    finally:
        training.build_learner = original
    return {"structure_members_pos_ssvm": len(view._members),
            "runtime_structure_members": len(used)}


def pystruct_lines() -> int:
    return sum(len(p.read_text(encoding="utf-8").splitlines())
               for p in (PKG / "pystruct").rglob("*.py"))


def measure() -> dict:
    from latentstruct.tasks import GrammaticalityTask, PosTask

    pos, pos_props = own_callables(PosTask)
    gram, _ = own_callables(GrammaticalityTask)
    contract, touched = static_members()
    out = {"pos_task_callables": pos, "pos_task_properties": pos_props,
           "grammaticality_methods": gram,
           "grammaticality_params": len([p for p in inspect.signature(
               GrammaticalityTask.__init__).parameters if p != "self"]),
           "contract_members": contract, "members_learners_touch": touched}
    out.update(runtime_counts())
    out.update(runtime_structure_members())
    out["pystruct_lines"] = pystruct_lines()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", action="store_true", help="print markdown rows")
    args = parser.parse_args()
    m = measure()
    if not args.table:
        print(json.dumps(m))
        return
    rows = [
        ("callables on `PosTask`, own classes included", f"{m['pos_task_callables']} "
         f"(+{m['pos_task_properties']} properties)"),
        ("`GrammaticalityTask` methods / constructor parameters",
         f"{m['grammaticality_methods']} / {m['grammaticality_params']}"),
        ("members a learner may touch (the contract) / that learner code touches (static)",
         f"{m['contract_members']} / {m['members_learners_touch']}"),
        ("members of the structure a `Tagger().fit` hands its learner / used at run time in "
         "three small fits", f"{m['structure_members_pos_ssvm']} / "
                             f"{m['runtime_structure_members']}"),
        ("`validate_params` runs in one `Tagger(C=0.5).fit` (+ `check_positive*` calls)",
         f"{m['validate_params_runs']} (+{m['check_positive_calls']})"),
        ("fitted checks in one small `Tagger().fit`",
         f"{m['fitted_checks']} calls, under {m['fitted_check_names']} names"),
        ("`latentstruct` modules run by one `Tagger().fit`", str(m["modules_per_tagger_fit"])),
        ("lines in `pystruct/`", f"{m['pystruct_lines']:,}"),
    ]
    for what, value in rows:
        print(f"| {what} | {value} |")


if __name__ == "__main__":
    main()
