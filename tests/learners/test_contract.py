"""The task <-> learner contract: declared capabilities, decoder statuses and checks enforced by
every latent learner, and scikit-learn's clone / model selection."""

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_validate

from latentstruct.exceptions import (
    ConfigError,
    is_fitted,
    ConvergenceWarning,
    InexactInferenceWarning,
    InferenceError,
)
from latentstruct.inference import ilp as ilp_module
from latentstruct.inference.ilp import ILPModel
from latentstruct.inference.result import TIME_LIMIT, DecodeResult
from latentstruct.learners import (
    JLIS,
    LCLR,
    LEARNERS,
    LatentPA,
    LCLRVariant,
    NormalizedBinaryView,
    StructuredSVM,
    TwoStage,
    check_compatible,
    valid_learners,
)
from latentstruct.tasks import TASKS, ChainStructure, ChunkTask, Dataset, TransliterationTask
from latentstruct.tasks.base import LatentBinaryTask, StructuredTask, Task
from latentstruct.tasks.contracts import (CAPABILITIES, LATENT_BINARY, MAX_DECODABLE, alternatives,
                                         missing_methods)
from latentstruct.testing import BagTask, make_bag_problem

ABSTRACT = (Task, StructuredTask, LatentBinaryTask)


def quiet(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


# --- declared capabilities ------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(TASKS))
def test_every_registered_task_implements_what_it_declares(name):
    cls = TASKS[name]
    assert cls.capabilities, f"task {name} declares no capability"
    assert missing_methods(cls, ABSTRACT) == {}
    assert set(cls.capabilities) <= set(CAPABILITIES)


def test_helper_tasks_implement_what_they_declare():
    for cls in (BagTask, NormalizedBinaryView):
        assert missing_methods(cls, ABSTRACT) == {}


def test_a_false_declaration_is_detected():
    class Liar(BagTask):
        capabilities = frozenset({LATENT_BINARY, MAX_DECODABLE})

    assert missing_methods(Liar, ABSTRACT) == {MAX_DECODABLE: ["argmax", "joint_feature", "loss"]}


@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_every_learner_requires_known_capabilities(name):
    cls = LEARNERS[name]
    needed = cls.required_capabilities(cls().get_params(deep=False))
    named = {a for req in needed for a in alternatives(req)}
    assert needed and named <= set(CAPABILITIES)


def test_mismatch_is_refused_with_the_valid_learners():
    with pytest.raises(ConfigError) as err:
        check_compatible(TransliterationTask, {}, StructuredSVM, {})
    msg = str(err.value)
    assert "max-decodable" in msg and "lclr, lclr-variant" in msg and "\n" not in msg
    assert {"lclr", "two-stage", "lclr-variant", "latent-pa"} <= set(valid_learners(TransliterationTask))
    assert "ssvm" not in valid_learners(TransliterationTask)
    assert {"ssvm", "jlis"} <= set(valid_learners(ChunkTask))
    assert "lclr" not in valid_learners(ChunkTask)


def test_requirements_depend_on_hyperparameters():
    class NoHeuristic(BagTask):
        capabilities = frozenset({LATENT_BINARY})

    check_compatible(NoHeuristic, {}, LCLR, {"init": "zeros"})
    with pytest.raises(ConfigError, match="init='two-stage'"):
        check_compatible(NoHeuristic, {}, LCLR, {})
    with pytest.raises(ConfigError, match="random_tie_break"):
        check_compatible(NoHeuristic, {}, LCLR, {"init": "zeros", "random_tie_break": True})
    with pytest.raises(ConfigError, match="heuristic"):
        check_compatible(NoHeuristic, {}, TwoStage, {})


def test_fit_checks_the_pair_too():
    task, X, y = make_bag_problem()
    with pytest.raises(ConfigError, match="max-decodable"):
        StructuredSVM(task).fit(X, [np.zeros(1)] * len(X))


# --- decoders are not trusted ------------------------------------------------------------
class WorstBagTask(BagTask):
    """Returns the *worst* vector of the bag with its true score."""

    def latent_argmax(self, x, w, *, random_state=None):
        scores = np.asarray(x) @ w
        h = int(np.argmin(scores))
        return DecodeResult(h, float(scores[h]))


class BoastingBagTask(BagTask):
    """Returns the right structure but reports a score 1 higher than its own."""

    def latent_argmax(self, x, w, *, random_state=None):
        res = super().latent_argmax(x, w)
        return DecodeResult(res.structure, res.score + 1.0)


LATENT_LEARNERS = [
    lambda t: LCLR(t, init="zeros", max_iter=10),
    lambda t: LCLR(t, max_iter=10),
    lambda t: LCLRVariant(t, max_iter=5),
    lambda t: LatentPA(t, max_iter=3),
]


@pytest.mark.parametrize("make", LATENT_LEARNERS)
@pytest.mark.parametrize("wrong", [WorstBagTask, BoastingBagTask])
def test_a_wrong_latent_decoder_makes_latent_learners_raise(make, wrong):
    _, X, y = make_bag_problem(n_examples=40, bag_size=4, random_state=3)
    task = wrong(5).fit()
    with pytest.raises(InferenceError, match="check_inference=False"):
        quiet(lambda: make(task).fit(X, y))


@pytest.mark.parametrize("make", LATENT_LEARNERS[:3])
def test_without_checking_a_wrong_decoder_is_counted_and_warned(make):
    _, X, y = make_bag_problem(n_examples=40, bag_size=4, random_state=3)
    task = BoastingBagTask(5).fit()
    learner = make(task).set_params(check_inference=False)
    with pytest.warns(InexactInferenceWarning, match="inconsistent"):
        learner.fit(X, y)
    assert learner.n_inconsistent_decodes_ > 0


def test_the_correct_decoder_passes_every_check():
    task, X, y = make_bag_problem(n_examples=40, bag_size=4, random_state=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", InexactInferenceWarning)
        m = LCLR(task, max_iter=10).fit(X, y)
    assert m.n_inconsistent_decodes_ == 0 and sum(m.n_inexact_decodes_) == 0


def _tiny_chunk(tiny_chunk_file):
    task = ChunkTask(window=0, affix_length=1)
    data = task.read(tiny_chunk_file)
    task.fit(data)
    return task, data


class WorstChain(ChainStructure):
    """Plain argmax returns the worst label sequence (scores negated), with its true score."""

    def argmax(self, x, w, y_true=None, *, random_state=None):
        if y_true is not None:
            return super().argmax(x, w, y_true, random_state=random_state)
        res = super().argmax(x, -w)
        return DecodeResult(res.structure, -res.score)

    def argmax_results(self, X, w, Y=None, *, random_state=None):
        return [self.argmax(X[i], w, None if Y is None else Y[i]) for i in range(len(X))]


class WorstChunkTask(ChunkTask):
    """A chunker whose chain decodes the worst labelling."""

    name = "worst-chunk"
    structure_class = WorstChain


def test_a_wrong_decoder_makes_jlis_raise(tiny_chunk_file):
    task, data = _tiny_chunk(tiny_chunk_file)
    worst = WorstChunkTask(window=0, affix_length=1).fit(data)
    X, Y = worst.featurize(data), worst.encode_targets(data.targets)
    from latentstruct.tasks.sequence.labelling import BinaryRecord

    pos = [BinaryRecord(r.words, r.pos) for r in data.records]
    neg = [p.permuted(list(range(len(p)))[::-1]) for p in pos]
    XB = worst.featurize(Dataset(pos + neg, []))
    yB = np.array([1] * len(pos) + [-1] * len(neg))
    with pytest.raises(InferenceError):
        quiet(lambda: JLIS(worst, max_iter=5, random_tie_break=False).fit(X, Y, XB, yB))


class ILPBagTask(BagTask):
    """The bag's latent choice decoded by a real HiGHS model (pick exactly one vector)."""

    def latent_argmax(self, x, w, *, random_state=None):
        x = np.asarray(x)
        res = ILPModel(x.shape[0], np.ones((1, x.shape[0])), [1.0], [1.0]).solve(x @ w)
        h = int(np.flatnonzero(res.structure)[0])
        return DecodeResult(h, float(x[h] @ w), res.status, res.stats)


@pytest.fixture
def ilp_hits_time_limits(monkeypatch):
    """Every third HiGHS solve reports that it hit its time limit (keeping its incumbent),
    as a solve stopped by ``time_limit`` does; the structure is left as found."""
    real = ilp_module.ILPModel.solve
    calls = {"n": 0}

    def solve(self, objective, **kw):
        res = real(self, objective, **kw)
        calls["n"] += 1
        if calls["n"] % 3 == 0:
            return DecodeResult(res.structure, res.score, TIME_LIMIT, {**res.stats, "forced": True})
        return res

    monkeypatch.setattr(ilp_module.ILPModel, "solve", solve)
    return calls


@pytest.mark.parametrize("make", [lambda t: LCLR(t, max_iter=5), lambda t: LCLRVariant(t, max_iter=3),
                                  lambda t: TwoStage(t)])
def test_an_ilp_time_limit_reaches_the_learner(make, ilp_hits_time_limits):
    _, X, y = make_bag_problem(n_examples=30, bag_size=3, random_state=1)
    task = ILPBagTask(5).fit()
    with pytest.raises(InferenceError, match="time_limit"):
        make(task).fit(X, y)
    learner = make(task).set_params(check_inference=False)
    with pytest.warns(InexactInferenceWarning, match=r"\d+ of \d+ decodes were not exact \(\d+ time_limit\)"):
        learner.fit(X, y)
    assert sum(np.atleast_1d(learner.n_inexact_decodes_)) > 0


# --- Theorem 1 at run time, converged_ is truthful ------------------------------------------
def test_objective_increase_is_an_error_not_convergence(monkeypatch):
    """A loop whose inner solver returns worse weights than it had must not report converged."""
    task, X, y = make_bag_problem(n_examples=40, bag_size=3, random_state=2)
    from latentstruct.learners.latent import alternating

    real = alternating.solve_grouped_dcd
    calls = {"n": 0}

    def sabotaged(pool, C, **kw):
        res = real(pool, C, **kw)
        calls["n"] += 1
        if calls["n"] > 3:  # from then on, w is pushed away from the optimum
            return type(res)(res.w * 3.0 + 1.0, res.alpha, res.primal, res.dual, 0.0,
                             res.n_iter, res.converged)
        return res

    monkeypatch.setattr(alternating, "solve_grouped_dcd", sabotaged)
    with pytest.raises(InferenceError, match="objective increased"):
        quiet(lambda: LCLR(task, init="zeros", max_iter=20).fit(X, y))
    calls["n"] = 0
    m = LCLR(task, init="zeros", max_iter=20, check_inference=False)
    with pytest.warns(Warning, match="objective increased"):
        m.fit(X, y)
    assert m.converged_ is False and m.stop_reason_ == "objective_increase"
    assert np.all(np.diff(m.objective_curve_) <= 1e-9 * np.abs(m.objective_curve_[:-1]))


def test_converged_is_true_only_when_tol_was_reached():
    task, X, y = make_bag_problem(n_examples=40, bag_size=3, random_state=2)
    m = LCLR(task, init="zeros", max_iter=50).fit(X, y)
    assert m.converged_ and m.stop_reason_ == "tol"
    with pytest.warns(ConvergenceWarning, match="max_iter=1"):
        m1 = LCLR(task, init="zeros", max_iter=1, tol=1e-300).fit(X, y)
    assert not m1.converged_ and m1.stop_reason_ == "max_iter"


# --- LCLR from zeros ------------------------------------------------------------------------
class TiedBagTask(BagTask):
    """Bags whose first two vectors are zero; ties go to the first optimum unless a
    random_state is given (then uniformly among all optima)."""

    capabilities = frozenset({"latent-binary", "heuristic", "random-ties"})

    def latent_argmax(self, x, w, *, random_state=None):
        scores = np.asarray(x) @ w
        best = np.flatnonzero(scores >= scores.max() - 1e-12)
        h = int(best[0]) if random_state is None else int(np.random.default_rng(random_state).choice(best))
        return DecodeResult(h, float(scores[h]))


def _tied_problem():
    """At w = 0 every structure ties; deterministic ties pick a zero vector everywhere, whose
    constraints cannot move w: a perfect fixed point at w = 0."""
    rng = np.random.default_rng(0)
    X, y = [], []
    for i in range(40):
        v = 0.1 * rng.normal(size=4)
        v[0] = 2.0 if i % 2 == 0 else -2.0
        X.append(np.vstack([np.zeros(4), np.zeros(4), v]))
        y.append(1 if i % 2 == 0 else -1)
    return TiedBagTask(4).fit(), X, np.array(y)


def test_lclr_from_zeros_stalls_with_a_warning_and_random_ties_leave_the_fixed_point():
    task, X, y = _tied_problem()
    with pytest.warns(ConvergenceWarning, match="never moved"):
        det = LCLR(task, init="zeros", max_iter=20).fit(X, y)
    assert np.all(det.coef_ == 0.0)
    rnd = LCLR(task, init="zeros", max_iter=20, random_tie_break=True, random_state=0).fit(X, y)
    assert rnd.coef_[0] > 0.1
    # every positive now completes to its informative vector
    assert rnd.latent_argmax([X[i] for i in range(0, 40, 2)]) == [2] * 20
    again = clone(rnd).fit(X, y)
    np.testing.assert_array_equal(again.coef_, rnd.coef_)  # seeded ties are reproducible


def test_weights_that_never_move_are_warned_about():
    task, X, y = make_bag_problem(n_examples=20, bag_size=2, random_state=0)
    X = [np.zeros_like(b) for b in X]  # nothing to learn from: w stays at 0
    with pytest.warns(ConvergenceWarning, match="never moved"):
        LCLR(task, init="zeros", max_iter=3).fit(X, y)


# --- scikit-learn ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_clone_keeps_a_fitted_task(name, tiny_chunk_file):
    cls = LEARNERS[name]
    needed = cls.required_capabilities(cls().get_params(deep=False))
    if any(MAX_DECODABLE in alternatives(req) for req in needed):
        task, _ = _tiny_chunk(tiny_chunk_file)
    else:
        task = make_bag_problem()[0]
    learner = cls(structure=task)
    copy = clone(learner)
    assert copy is not learner and copy.structure is not task
    assert is_fitted(copy.structure) and copy.structure.n_features == task.n_features
    assert copy.get_params(deep=False).keys() == learner.get_params(deep=False).keys()


def test_fitted_task_refuses_feature_parameters(tiny_chunk_file):
    task, _ = _tiny_chunk(tiny_chunk_file)
    with pytest.raises(ConfigError, match="cannot change 'window'"):
        task.set_params(window=3)
    task.set_params(window=0)  # the same value is fine


@pytest.mark.slow
def test_grid_search_on_chunking(require_data):
    path = require_data("conll2000", "train.txt")
    task = ChunkTask()
    data = task.read(path)
    data = Dataset(data.records[:120], data.targets[:120], data.path)
    task.fit(data)
    X, Y = task.featurize(data), task.encode_targets(data.targets)
    search = GridSearchCV(StructuredSVM(task, max_iter=5), {"C": [0.01, 1.0]}, cv=2,
                          error_score="raise")
    quiet(lambda: search.fit(X, Y))
    assert set(search.cv_results_["param_C"]) == {0.01, 1.0}
    scores = search.cv_results_["mean_test_score"]
    assert np.all((scores > 0.5) & (scores <= 1.0))  # chunk F1 of held-out folds
    assert search.best_estimator_.coef_.shape == (task.n_features,)
    cv = quiet(lambda: cross_validate(StructuredSVM(task, max_iter=3), X, Y, cv=2))
    assert cv["test_score"].shape == (2,)


def test_grid_search_on_lclr():
    task, X, y = make_bag_problem(n_examples=80, bag_size=3, random_state=5)
    search = GridSearchCV(LCLR(task, max_iter=10), {"C": [0.1, 1.0], "init": ["zeros", "two-stage"]},
                          cv=2, error_score="raise")
    quiet(lambda: search.fit(X, np.asarray(y)))
    assert len(search.cv_results_["params"]) == 4
    assert 0.5 < search.best_score_ <= 1.0
    assert isinstance(search.score(X, y), float)


@pytest.mark.slow
def test_grid_search_on_lclr_transliteration():
    task = TransliterationTask(n_train=30, n_test=30, neg_ratio=0.05)
    data = task.read(None)
    task.fit(data)
    X, y = task.featurize(data), task.encode_targets(data.targets)
    folds = StratifiedKFold(2, shuffle=True, random_state=0)  # the file lists positives first
    search = GridSearchCV(LCLR(task, max_iter=3), {"C": [0.1, 1.0]}, cv=folds, error_score="raise")
    quiet(lambda: search.fit(X, y))
    majority = max(np.mean(y > 0), np.mean(y < 0))
    assert majority + 0.05 < search.best_score_ <= 1.0
