"""LatentPA (Clifton et al. 2013, Alg. 1) and the LCLR-variant (their footnote 1)."""

import warnings

import numpy as np
import pytest

from latentstruct.data.sparse import SparseVector
from latentstruct.exceptions import ConfigError, ConvergenceWarning, InferenceError, NotFittedError
from latentstruct.inference.result import DecodeResult
from latentstruct.learners import LCLR, LatentPA, LCLRVariant, get_learner_class
from latentstruct.learners.online.latent_pa import pa_step_size, scale_to_range
from latentstruct.tasks.base import LatentBinaryTask
from latentstruct.testing import BagTask, make_bag_problem


# ----------------------------------------------------------------------------------------
# one PA step solves its one-constraint QP
# ----------------------------------------------------------------------------------------
def closed_form_tau(loss, sq, variant, C):
    if loss == 0:
        return 0.0
    return {"pa": loss / sq, "pa-i": min(C, loss / sq), "pa-ii": loss / (sq + 1 / (2 * C))}[variant]


def qp_objective(tau, xi, sq, variant, C):
    """1/2||w - w_t||^2 (+ C xi or C xi^2) at w = w_t + tau y phi (||w - w_t||^2 = tau^2 sq)."""
    slack = {"pa": 0.0, "pa-i": C * xi, "pa-ii": C * xi * xi}[variant]
    return 0.5 * tau * tau * sq + slack


def solve_qp_exactly(margin, sq, variant, C):
    """The exact optimum (tau, xi) of the one-constraint PA problem, by KKT enumeration.

    min_w 1/2||w - w_t||^2 (+ C xi or C xi^2) s.t. y w.phi >= 1 - xi, xi >= 0 (xi = 0 for
    "pa"), with margin = y w_t.phi and sq = ||phi||^2 > 0.  Writing w = w_t + tau y phi + v
    with v orthogonal to phi, v only adds 1/2||v||^2 and does not enter the constraint, so
    v = 0 and the problem is the 2-variable convex QP

        min_{tau, xi} 1/2 sq tau^2 + g(xi)   s.t.  sq tau + xi >= r := 1 - margin,  xi >= 0.

    Its optimum is the minimiser of the objective on the affine hull of its active set, so
    it is among the candidates below (one per active set, each the stationary point of the
    objective on that set); the feasible candidate of lowest objective is the optimum.
    Independent of ``pa_step_size`` and of any iterative optimiser.
    """
    assert sq > 0
    r = 1.0 - margin
    cands = [(0.0, 0.0)]  # constraint inactive, xi = 0 (xi > 0 with it inactive is never stationary)
    cands.append((r / sq, 0.0))  # constraint active, xi = 0
    if variant == "pa-i":  # active, xi > 0: d/dxi [(r - xi)^2 / (2 sq) + C xi] = 0
        xi = r - C * sq
        cands.append(((r - xi) / sq, xi))
    if variant == "pa-ii":  # active, xi > 0: d/dxi [(r - xi)^2 / (2 sq) + C xi^2] = 0
        xi = r / (1.0 + 2.0 * C * sq)
        cands.append(((r - xi) / sq, xi))
    feasible = [(t, x) for t, x in cands
                if x >= 0.0 and (variant != "pa" or x == 0.0) and sq * t + x >= r - 1e-12 * (1 + abs(r))]
    return min(feasible, key=lambda c: qp_objective(c[0], c[1], sq, variant, C))


def reduced_objective(tau, r, sq, variant, C):
    """The objective with xi minimised out for a given tau (inf where infeasible)."""
    xi = np.maximum(0.0, r - sq * tau)
    if variant == "pa":
        return np.where(xi > 0, np.inf, 0.5 * sq * tau * tau)
    return qp_objective(tau, xi, sq, variant, C)


@pytest.mark.parametrize("variant", ["pa", "pa-i", "pa-ii"])
@pytest.mark.parametrize("seed", range(6))
def test_pa_step_solves_its_qp(variant, seed):
    rng = np.random.default_rng(seed)
    d = 5
    w_t = rng.normal(size=d)
    phi = rng.normal(size=d)
    y = float(rng.choice([-1, 1]))
    C = float(rng.choice([0.05, 0.5, 5.0]))
    margin = float(y * w_t @ phi)
    loss = max(0.0, 1.0 - margin)
    sq = float(phi @ phi)
    tau = pa_step_size(loss, sq, variant, C)
    assert tau == pytest.approx(closed_form_tau(loss, sq, variant, C), rel=1e-12, abs=1e-15)

    tau_ref, xi_ref = solve_qp_exactly(margin, sq, variant, C)
    # the reference is the minimum of the (convex) reduced problem: no point of a fine grid
    # around it, nor its neighbours, does better
    r = 1.0 - margin
    grid = tau_ref + np.concatenate([np.linspace(-3, 3, 6001) * (1 + abs(tau_ref)), [-1e-7, 1e-7]])
    f_ref = qp_objective(tau_ref, xi_ref, sq, variant, C)
    assert f_ref <= np.min(reduced_objective(grid, r, sq, variant, C)) + 1e-12

    # the library's step is that optimum: same tau, same point w, same objective, feasible
    assert tau == pytest.approx(tau_ref, rel=1e-12, abs=1e-15)
    w_new = w_t + tau * y * phi
    np.testing.assert_allclose(w_new, w_t + tau_ref * y * phi, rtol=0, atol=1e-12)
    new_margin = float(y * w_new @ phi)
    xi_new = 0.0 if variant == "pa" else max(0.0, 1.0 - new_margin)
    assert new_margin >= 1.0 - xi_new - 1e-12
    f_new = 0.5 * float(np.sum((w_new - w_t) ** 2)) + qp_objective(0.0, xi_new, sq, variant, C)
    assert f_new == pytest.approx(f_ref, rel=1e-10, abs=1e-14)
    if variant == "pa" and loss > 0:
        assert y * w_new @ phi == pytest.approx(1.0)


def test_zero_loss_is_passive():
    assert pa_step_size(0.0, 3.0, "pa") == 0.0
    assert pa_step_size(0.0, 3.0, "pa-ii", 1.0) == 0.0


def test_learner_step_equals_closed_form():
    """The update LatentPA makes is w_t + tau y Phi(x, h*) with h* the argmax under w_t."""
    task, X, y = make_bag_problem(n_examples=12, bag_size=3, random_state=5)
    steps = []
    for variant, C in (("pa", 1.0), ("pa-i", 0.05), ("pa-ii", 0.3)):
        del steps[:]
        prev = {"w": np.zeros(task.n_features)}

        def cb(ev, prev=prev):
            if ev.kind != "step":
                return
            x = X[ev.example]
            h = task.latent_argmax(x, prev["w"]).structure
            phi = np.asarray(x)[h]
            loss = max(0.0, 1 - ev.label * prev["w"] @ phi)
            tau = closed_form_tau(loss, phi @ phi, variant, C)
            np.testing.assert_allclose(ev.coef, prev["w"] + tau * ev.label * phi, atol=1e-12)
            assert ev.tau == pytest.approx(tau)
            steps.append(ev)
            prev["w"] = ev.coef.copy()

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            LatentPA(task, variant=variant, C=C, max_iter=3, random_state=0, callback=cb).fit(X, y)
        assert len(steps) > len(X)


# ----------------------------------------------------------------------------------------
# Algorithm 1's control flow
# ----------------------------------------------------------------------------------------
def test_negatives_loop_stops_at_cap_and_counts():
    # A bag {v, -v} scores |w.v| >= 0 under every w: it can never be classified as negative.
    v = np.array([1.0, 2.0, 0.5])
    X = [np.stack([v, -v])]
    y = np.array([-1])
    task = BagTask(3).fit()
    rounds = []
    with pytest.warns(ConvergenceWarning, match="max_negative_updates=4"):
        m = LatentPA(task, max_negative_updates=4, max_iter=3, random_state=0,
                     callback=lambda ev: rounds.append(ev.score) if ev.kind == "step" else None).fit(X, y)
    assert m.n_negative_cap_hits_ == 3  # one per epoch
    assert m.n_steps_ == 12 and len(rounds) == 12
    assert m.n_updates_ == 12
    assert all(s >= 0 for s in rounds)


def test_negative_redecoded_until_correct_positive_once():
    # One-vector bags: a misclassified negative needs one update, and its second decode
    # (score -1 < 0) ends the loop; a positive always gets exactly one step.
    X = [np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]])]
    y = np.array([1, -1])
    task = BagTask(2).fit()
    events = []
    m = LatentPA(task, max_iter=1, random_state=0, callback=events.append).fit(X, y)
    per_example = [sum(1 for e in events if e.kind == "step" and e.example == i) for i in (0, 1)]
    assert per_example == [1, 2]
    assert m.n_negative_cap_hits_ == 0
    assert m.n_updates_ == 2 and m.n_steps_ == 3


def test_average_equals_mean_of_iterates():
    task, X, y = make_bag_problem(n_examples=10, bag_size=3, random_state=2)
    iterates = []
    cb = lambda ev: iterates.append(ev.coef.copy()) if ev.kind == "step" else None  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        avg = LatentPA(task, average=True, max_iter=4, random_state=1, callback=cb).fit(X, y)
    assert len(iterates) == avg.n_steps_
    np.testing.assert_allclose(avg.coef_, np.mean(iterates, axis=0), atol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        last = LatentPA(task, average=False, max_iter=4, random_state=1).fit(X, y)
    np.testing.assert_allclose(last.coef_, iterates[-1], atol=1e-12)


def test_learns_bag_problem_and_is_reproducible():
    task, X, y = make_bag_problem(n_examples=400, bag_size=3, random_state=7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        m = LatentPA(task, max_iter=10, random_state=0).fit(X[:200], y[:200])
        again = LatentPA(task, max_iter=10, random_state=0).fit(X[:200], y[:200])
        other = LatentPA(task, max_iter=10, random_state=1).fit(X[:200], y[:200])
    assert m.score(X[200:], y[200:]) > 0.8  # chance is 0.5
    assert m.n_passes_ == m.n_iter_ == len(m.accuracy_curve_) == len(m.loss_curve_)
    assert m.n_updates_ > 0
    np.testing.assert_array_equal(m.coef_, again.coef_)
    assert not np.array_equal(m.coef_, other.coef_)


def test_stops_early_when_every_margin_is_met():
    X = [np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]])]
    y = np.array([1, -1])
    m = LatentPA(BagTask(2).fit(), max_iter=50, random_state=0).fit(X, y)
    assert m.n_passes_ == 2  # epoch 1 fixes both margins; epoch 2 has no loss
    assert m.accuracy_curve_[-1] == 1.0 and m.loss_curve_[-1] == 0.0


def test_init_from_coef_init_and_heuristic():
    task, X, y = make_bag_problem(n_examples=20, random_state=3)
    w0 = np.full(task.n_features, 0.5)
    first = []
    cb = lambda ev: first.append(ev) if ev.kind == "step" and not first else None  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        LatentPA(task, coef_init=w0, max_iter=1, random_state=0, callback=cb).fit(X, y)
        x = X[first[0].example]
        assert first[0].score == pytest.approx(max(np.asarray(x) @ w0))
        m = LatentPA(task, init="heuristic", heuristic_scale=2.0, max_iter=1).fit(X, y)
        assert m.init_scale_ == 2.0
        auto = LatentPA(task, init="heuristic", max_iter=2, random_state=0).fit(X, y)
        zero = LatentPA(task, init="zeros", max_iter=2, random_state=0).fit(X, y)
    assert auto.init_scale_ == pytest.approx(np.max(np.abs(zero.coef_)))  # heuristic max |w| is 1
    np.testing.assert_allclose(np.max(np.abs(scale_to_range(task.heuristic_weights(), zero.coef_))),
                               np.max(np.abs(zero.coef_)))
    with pytest.raises(ConfigError, match="coef_init must have shape"):
        LatentPA(task, coef_init=np.ones(2)).fit(X, y)


@pytest.mark.parametrize("params, match", [
    ({"variant": "pa-iii"}, "variant"),
    ({"C": 0}, "'C'"),
    ({"max_iter": 0}, "max_iter"),
    ({"max_negative_updates": 0}, "max_negative_updates"),
    ({"average": "yes"}, "average"),
    ({"init": "two-stage"}, "init"),
    ({"heuristic_scale": -1.0}, "heuristic_scale"),
])
def test_bad_parameters(params, match):
    task, X, y = make_bag_problem(n_examples=10, random_state=0)
    with pytest.raises(ConfigError, match=match):
        LatentPA(task, **params).fit(X, y)


def test_api_and_registry():
    task, X, y = make_bag_problem(n_examples=10, random_state=0)
    with pytest.raises(NotFittedError):
        LatentPA(task).predict(X)
    assert get_learner_class("latent-pa") is LatentPA
    assert get_learner_class("lclr-variant") is LCLRVariant
    with pytest.raises(ConfigError, match="labels must be -1 or \\+1"):
        LatentPA(task).fit(X, np.zeros(len(X)))
    meta, arrays = LatentPA(task, max_iter=2, random_state=0).fit(X, y)._learned_state()
    restored = LatentPA(task)
    restored._restore(meta, arrays)
    assert restored.n_updates_ > 0 and restored.accuracy_curve_ == meta["accuracy_curve_"]


# ----------------------------------------------------------------------------------------
# LCLR-variant
# ----------------------------------------------------------------------------------------
class _CountingBags(BagTask):
    """BagTask that counts latent_argmax calls per example (by id of the array)."""

    def __init__(self, n_features=5):
        super().__init__(n_features)
        self.calls = 0

    def latent_argmax_batch(self, X, w, *, random_state=None):
        self.calls += len(X)
        return super().latent_argmax_batch(X, w, random_state=random_state)


def test_lclr_variant_one_decode_per_outer_iteration():
    task0, X, y = make_bag_problem(n_examples=40, bag_size=4, random_state=1)
    task = _CountingBags(task0.n_features).fit()
    m = LCLRVariant(task, init="zeros", max_iter=6, random_state=0).fit(X, y)
    # this problem reaches a fixed point (nothing changes) at the 4th outer iteration
    T = m.n_iter_
    assert T == 4 and m.converged_ and m.stop_reason_ == "fixed_point"
    assert len(m.objective_curve_) == T + 1
    assert len(m.cache_size_curve_) == T  # one cutting-plane round per outer iteration
    assert np.all(np.diff(m.cache_size_curve_) >= 0) and m.cache_size_curve_[-1] == m.cache_size_curve_[-2]
    assert m.cache_size_curve_[-1] <= T * (y < 0).sum()
    assert "max_cutting_plane_rounds" not in m.get_params() and "epsilon" not in m.get_params()
    # the initial objective (n decodes), then per outer iteration only the objective at the
    # new w (n): the positives' completion and the negatives' one decode -- no decoding
    # inside the inner solve -- take the objective pass's results at the same w
    n = len(X)
    assert task.calls == n + T * n
    short = LCLRVariant(task, init="zeros", max_iter=2, random_state=0).fit(X, y)
    assert short.n_iter_ == 2 and not short.converged_ and short.stop_reason_ == "max_iter"


def test_lclr_variant_with_one_structure_per_example_is_the_svm():
    task, X, y = make_bag_problem(n_examples=40, bag_size=1, random_state=4)
    kw = dict(C=0.5, init="zeros", dcd_tol=1e-10, dcd_max_iter=100000, random_state=0)
    var = LCLRVariant(task, max_iter=3, dcd_gap_tol=None, **kw).fit(X, y)
    ref = LCLR(task, tol=1e-12, **kw).fit(X, y)
    np.testing.assert_allclose(var.coef_, ref.coef_, atol=1e-6)


def test_lclr_variant_learns():
    task, X, y = make_bag_problem(n_examples=300, bag_size=3, random_state=7)
    m = LCLRVariant(task, init="zeros", max_iter=15, random_state=0).fit(X[:150], y[:150])
    assert m.score(X[150:], y[150:]) > 0.7


class _NeverNegative(LatentBinaryTask):
    """A toy task whose argmax always scores >= 0: the {v, -v} bag as a class."""

    name = "never-negative"

    def __init__(self):
        pass

    n_features = 1

    def fit(self, dataset=None):
        self.fitted_ = True
        return self

    def latent_argmax(self, x, w, *, random_state=None):
        s = float(w[0] * x)
        return DecodeResult(0 if s >= 0 else 1, abs(s))

    def latent_feature(self, x, h):
        return SparseVector(np.array([0]), np.array([x if h == 0 else -x], dtype=float))


class _WrongScore(BagTask):
    """Reports a score that its structure does not have."""

    def latent_argmax(self, x, w, *, random_state=None):
        res = super().latent_argmax(x, w)
        return DecodeResult(res.structure, res.score + 0.5)


def test_inconsistent_decoder_raises_when_checking():
    _, X, y = make_bag_problem(n_examples=10, random_state=0)
    task = _WrongScore(5).fit()
    with pytest.raises(InferenceError, match="argmax and its feature map disagree"):
        LatentPA(task, max_iter=1).fit(X, y)
    LatentPA(task, max_iter=1, check_inference=False).fit(X, y)


def test_cap_with_a_task_class():
    task = _NeverNegative().fit()
    with pytest.warns(ConvergenceWarning):
        m = LatentPA(task, max_negative_updates=5, max_iter=2, random_state=0).fit([2.0, 3.0], np.array([-1, -1]))
    assert m.n_negative_cap_hits_ == 4
