"""PyStruct's learners (latentstruct.pystruct.learners) on tiny models with brute-force
inference (tests/pystruct/toy_models.py): the cutting-plane QPs against the exact optimum
of the fully enumerated QP, the algorithms' guarantees, and refusals."""

from __future__ import annotations

import numpy as np
import pytest

from latentstruct.exceptions import ConfigError, InputError
from latentstruct.pystruct.learners import (FrankWolfeSSVM, LatentSSVM, NSlackSSVM,
                                            OneSlackSSVM, PrimalDSStructuredSVM,
                                            SquaredHingeSSVM,
                                            StructuredPerceptron, SubgradientLatentSSVM,
                                            SubgradientSSVM)
from latentstruct.solvers.qp import solve_dual, solve_primal
from latentstruct.pystruct.utils.objective import objective_primal

from toy_models import (ToyBinary, ToyChain, ToyLatentMulticlass, ToyMulticlass, chain_data,
                        exact_primal_optimum, exact_squared_optimum, multiclass_data,
                        xor_clusters)


# ------------------------------------------------------------------------------ the QP
@pytest.mark.parametrize("seed", range(6))
def test_dual_qp_matches_scipy(seed):
    from scipy.optimize import minimize

    rng = np.random.default_rng(seed)
    D = rng.normal(size=(9, 4))
    b = rng.uniform(size=9)
    group = rng.integers(0, 3, size=9)
    limits = np.array([1.0, 0.3, 2.0])
    got = solve_dual(D, b, group, limits, negativity=[2])
    F = np.vstack([D, -np.eye(4)[[2]]])

    def neg_dual(a):
        v = F.T @ a
        return 0.5 * v @ v - b @ a[:9]

    cons = [{"type": "ineq", "fun": (lambda a, g=g: limits[g] - a[:9][group == g].sum())}
            for g in range(3)]
    ref = minimize(neg_dual, np.zeros(10), bounds=[(0, None)] * 10, constraints=cons,
                   method="SLSQP", options={"ftol": 1e-14, "maxiter": 1000})
    assert got.dual == pytest.approx(-ref.fun, abs=1e-7)
    primal = solve_primal(D, b, group, limits, negativity=[2])
    assert primal.dual == pytest.approx(-ref.fun, abs=1e-7)
    assert np.allclose(primal.w, got.w, atol=1e-5)
    assert np.allclose(np.r_[primal.alpha, primal.beta], np.r_[got.alpha, got.beta], atol=1e-5)
    assert got.w[2] <= 0.0
    for g in range(3):
        assert got.alpha[group == g].sum() <= limits[g] + 1e-7


# --------------------------------------------------------------------- cutting planes
CASES = [(ToyMulticlass(3, 3), multiclass_data, 1.0), (ToyMulticlass(3, 3), multiclass_data, 10.0),
         (ToyChain(2, 2), chain_data, 1.0), (ToyChain(2, 3), chain_data, 0.5)]


@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("learner", [NSlackSSVM, OneSlackSSVM])
def test_cutting_plane_reaches_the_exact_optimum(case, learner):
    model, data, C = CASES[case]
    X, Y = data(case)
    best, w_best = exact_primal_optimum(model, X, Y, C)
    clf = learner(model, C=C, tol=1e-7, max_iter=2000, check_constraints=True).fit(X, Y)
    got = objective_primal(model, clf.w, X, Y, C)
    assert got == pytest.approx(best, rel=1e-5, abs=1e-6)
    # the final dual objective is a lower bound the cutting planes close to within tol
    assert clf.objective_curve_[-1] <= best + 1e-6
    assert clf.objective_curve_[-1] == pytest.approx(best, rel=1e-5, abs=1e-5)
    assert np.allclose(clf.w, w_best, atol=1e-3)
    assert clf.primal_objective_curve_[-1] == pytest.approx(got, rel=1e-9)


@pytest.mark.parametrize("learner", [NSlackSSVM, OneSlackSSVM])
def test_cutting_plane_dual_never_decreases(learner):
    # each new constraint only shrinks the feasible set of the primal: the dual of the
    # working set's QP rises (without constraint removal)
    model = ToyChain(2, 3)
    X, Y = chain_data(7, n=8)
    params = dict(C=2.0, tol=1e-6, inactive_window=0)
    if learner is NSlackSSVM:
        params["batch_size"] = 1
    clf = learner(model, **params).fit(X, Y)
    curve = np.array(clf.objective_curve_)
    assert len(curve) >= 2
    assert np.all(np.diff(curve) >= -1e-7)


def test_one_slack_without_removal_has_one_constraint_per_iteration():
    model = ToyMulticlass(3, 3)
    X, Y = multiclass_data(3, n=20)
    clf = OneSlackSSVM(model, C=1.0, tol=1e-4, inactive_window=0).fit(X, Y)
    assert len(clf.constraints_) == len(clf.objective_curve_)
    pruned = OneSlackSSVM(model, C=1.0, tol=1e-4, inactive_threshold=1e-8,
                          inactive_window=1).fit(X, Y)
    assert len(pruned.constraints_) < len(pruned.objective_curve_)
    assert objective_primal(model, pruned.w, X, Y, 1.0) == pytest.approx(
        objective_primal(model, clf.w, X, Y, 1.0), rel=1e-3)


def test_one_slack_inference_cache_gives_the_same_optimum():
    model = ToyChain(2, 2)
    X, Y = chain_data(11, n=8)
    plain = OneSlackSSVM(model, C=1.0, tol=1e-6).fit(X, Y)
    cached = OneSlackSSVM(model, C=1.0, tol=1e-6, inference_cache=5).fit(X, Y)
    assert any(cached.cached_constraint_)
    assert len(cached.inference_cache_) == len(X)
    assert all(1 <= len(c) <= 5 for c in cached.inference_cache_)
    assert objective_primal(model, cached.w, X, Y, 1.0) == pytest.approx(
        objective_primal(model, plain.w, X, Y, 1.0), rel=1e-4)


def _summed_gap(model, clf, X, Y) -> float:
    """How far the inference's summed constraint at ``clf.w`` beats the working set's slack."""
    w = clf.w
    current = max(0.0, max(b - w @ d for d, b in clf.constraints_))
    found = [model.loss_augmented_inference(x, y, w) for x, y in zip(X, Y)]
    violation = sum(model.loss(y, y_hat) - w @ (model.joint_feature(x, y)
                                                 - model.joint_feature(x, y_hat))
                    for x, y, y_hat in zip(X, Y, found))
    return violation - current


def test_one_slack_cache_holds_distinct_labellings_and_tol_is_per_example():
    model = ToyChain(2, 2)
    X, Y = chain_data(11, n=8)
    clf = OneSlackSSVM(model, C=1.0, tol=1e-3, inference_cache=50).fit(X, Y)
    for entries in clf.inference_cache_:
        keys = {tuple(np.asarray(y_hat).tolist()) for y_hat in entries}
        assert len(keys) == len(entries)  # one entry per distinct labelling
    # at the end the inference's summed constraint beats the working set's slack by less
    # than tol per example (PyStruct averages the constraint over the examples)
    assert _summed_gap(model, clf, X, Y) / len(X) < 1e-3
    # with tol=0.1 training stops while the summed gap is still over 0.1 (0.65 here)
    loose = OneSlackSSVM(model, C=1.0, tol=0.1).fit(X, Y)
    assert 0.1 < _summed_gap(model, loose, X, Y) < 0.1 * len(X)


@pytest.mark.parametrize("learner", [NSlackSSVM, OneSlackSSVM])
def test_negativity_constraint_holds_and_is_the_constrained_optimum(learner):
    model = ToyMulticlass(3, 3)
    X, Y = multiclass_data(5)
    free = learner(model, C=1.0, tol=1e-7).fit(X, Y)
    held = [int(j) for j in np.flatnonzero(free.w > 1e-3)[:2]]
    clf = learner(model, C=1.0, tol=1e-7, negativity_constraint=held).fit(X, Y)
    assert np.all(clf.w[held] <= 0.0)
    # held at zero or below, the objective cannot beat the free optimum
    assert (objective_primal(model, clf.w, X, Y, 1.0)
            >= objective_primal(model, free.w, X, Y, 1.0) - 1e-6)


def test_n_slack_soft_warm_start_rebuilds_constraints_for_new_targets():
    model = ToyMulticlass(3, 3)
    X, Y = multiclass_data(2)
    clf = NSlackSSVM(model, C=1.0, tol=1e-7).fit(X, Y)
    Y2 = [(y + 1) % 3 for y in Y]
    clf.fit(X, Y2, warm_start="soft")
    best, _ = exact_primal_optimum(model, X, Y2, 1.0)
    assert objective_primal(model, clf.w, X, Y2, 1.0) == pytest.approx(best, rel=1e-5)


# --------------------------------------------------------------------------- refusals
@pytest.mark.parametrize("learner", [NSlackSSVM, OneSlackSSVM])
@pytest.mark.parametrize("params, word", [({"C": 0.0}, "'C'"), ({"tol": -1.0}, "'tol'"),
                                          ({"max_iter": 0}, "'max_iter'"),
                                          ({"n_jobs": 0}, "'n_jobs'"),
                                          ({"switch_to": 3}, "'switch_to'"),
                                          ({"negativity_constraint": [-1]}, "negativity")])
def test_bad_parameters_are_refused(learner, params, word):
    X, Y = multiclass_data(0)
    with pytest.raises(ConfigError, match=word):
        learner(ToyMulticlass(3, 3), **params).fit(X, Y)


def test_negativity_index_out_of_range_is_refused():
    X, Y = multiclass_data(0)
    with pytest.raises(ConfigError, match="out of range for the model's 9 weights"):
        OneSlackSSVM(ToyMulticlass(3, 3), negativity_constraint=[9]).fit(X, Y)


def test_mismatched_data_and_unfitted_predict():
    from sklearn.exceptions import NotFittedError

    X, Y = multiclass_data(0)
    with pytest.raises(InputError, match="12 inputs X but 11 labels"):
        NSlackSSVM(ToyMulticlass(3, 3)).fit(X, Y[:-1])
    with pytest.raises(NotFittedError):
        NSlackSSVM(ToyMulticlass(3, 3)).predict(X)


# ------------------------------------------------------------------------ Frank-Wolfe
@pytest.mark.parametrize("case", range(len(CASES)))
def test_block_frank_wolfe_dual_rises_and_gap_closes(case):
    model, data, C = CASES[case]
    X, Y = data(case)
    best, _ = exact_primal_optimum(model, X, Y, C)
    clf = FrankWolfeSSVM(model, C=C, max_iter=300, tol=1e-4, do_averaging=False,
                         check_dual_every=5, random_state=0).fit(X, Y)
    dual = np.array(clf.objective_curve_)
    # each block step with exact line search is a coordinate ascent step on the dual
    assert np.all(np.diff(dual) >= -1e-9)
    # weak duality against the exact optimum
    assert np.all(dual <= best + 1e-7)
    assert np.all(np.array(clf.primal_objective_curve_) >= best - 1e-7)
    gaps = np.array(clf.duality_gaps_)
    assert gaps[-1] < 0.1 * gaps[0]
    assert gaps[-1] <= 1e-4 or len(dual) == 300
    # the gap bounds the distance to the optimum (Frank-Wolfe's certificate)
    assert 0 <= objective_primal(model, clf.w, X, Y, C) - best <= gaps[-1] + 1e-9


@pytest.mark.parametrize("line_search", [True, False])
def test_batch_frank_wolfe_gap_is_the_duality_gap(line_search):
    model, data, C = CASES[2]
    X, Y = data(2)
    best, _ = exact_primal_optimum(model, X, Y, C)
    clf = FrankWolfeSSVM(model, C=C, max_iter=200, tol=1e-6, batch_mode=True,
                         line_search=line_search).fit(X, Y)
    gaps = np.array(clf.duality_gaps_)
    primal = np.array(clf.primal_objective_curve_[:len(gaps)])
    assert np.all(gaps >= -1e-9)
    # primal - gap is the dual at the same w: never above the optimum
    assert np.all(primal - gaps <= best + 1e-7)
    assert gaps[-1] < 0.05 * gaps[0]
    assert clf.primal_objective_curve_[-1] == pytest.approx(
        objective_primal(model, clf.w, X, Y, C), rel=1e-9)


def test_frank_wolfe_averaging_reports_the_primal_of_the_average():
    model = ToyMulticlass(3, 3)
    X, Y = multiclass_data(4)
    clf = FrankWolfeSSVM(model, C=1.0, max_iter=20, random_state=1).fit(X, Y)
    assert clf.primal_objective_curve_[-1] == pytest.approx(
        objective_primal(model, clf.w, X, Y, 1.0), rel=1e-9)
    best, _ = exact_primal_optimum(model, X, Y, 1.0)
    assert clf.objective_curve_[-1] <= best + 1e-7


# ------------------------------------------------------------------------- subgradient
@pytest.mark.parametrize("batch_size", [None, -1, 4])
def test_subgradient_lowers_the_objective_and_reports_it_exactly(batch_size):
    model = ToyMulticlass(3, 3)
    X, Y = multiclass_data(6)
    best, _ = exact_primal_optimum(model, X, Y, 1.0)
    clf = SubgradientSSVM(model, C=1.0, max_iter=300, batch_size=batch_size,
                          averaging="linear", break_on_no_constraints=False).fit(X, Y)
    got = objective_primal(model, clf.w, X, Y, 1.0)
    assert clf.objective_curve_[-1] == pytest.approx(got, rel=1e-9)
    at_zero = objective_primal(model, np.zeros(9), X, Y, 1.0)
    assert best <= got + 1e-9
    assert got - best < 0.1 * (at_zero - best)


def test_subgradient_latent_without_hidden_states_is_subgradient():
    model = ToyMulticlass(3, 3)
    latent = ToyLatentMulticlass(3, 3, k=1)
    X, Y = multiclass_data(8)
    params = dict(C=10.0, max_iter=15, learning_rate=0.01, momentum=0.9)
    plain = SubgradientSSVM(model, **params).fit(X, Y)
    hidden = SubgradientLatentSSVM(latent, **params).fit(X, Y)
    assert np.allclose(plain.w, hidden.w)
    assert np.allclose(plain.objective_curve_, hidden.objective_curve_)
    assert hidden.predict(X) == plain.predict(X)


# -------------------------------------------------------------------------- perceptron
XOR_X = [np.array([a, b, 1.0]) for a in (-1, 1) for b in (-1, 1)]


def test_perceptron_xor_cycle_by_hand():
    # online: w cycles (1, 1, -1), (0, 2, 0), (1, 1, 1), (0, 0, 0) every epoch
    Y = [-1, 1, 1, -1]
    clf = StructuredPerceptron(ToyBinary(3), max_iter=2).fit(XOR_X, Y)
    assert np.array_equal(clf.w, [0, 0, 0])
    clf.set_params(average=True).fit(XOR_X, Y)
    assert np.allclose(clf.w, [0.5, 1, 0])
    # batch: (0, 0, -2) then (0, 0, 0)
    clf.set_params(batch=True, average=False).fit(XOR_X, Y)
    assert np.array_equal(clf.w, [0, 0, 0])
    clf.set_params(average=True).fit(XOR_X, Y)
    assert np.allclose(clf.w, [0, 0, -1])


def test_perceptron_partial_averaging_by_hand():
    # steps weigh (1 + epoch): the averages over epochs from k are hand-computed
    Y = [-1, 1, 1, -1]
    clf = StructuredPerceptron(ToyBinary(3), max_iter=5, decay_exponent=1, decay_t0=1)
    got = {a: clf.set_params(average=a).fit(XOR_X, Y).w for a in (0, 1, 4, -1)}
    assert np.allclose(got[0], [1.5, 3, 0])
    assert np.allclose(got[1], [1.75, 3.5, 0])
    assert np.allclose(got[4], [2.5, 5, 0])
    assert np.array_equal(got[4], got[-1])


def test_perceptron_separates_separable_data():
    model = ToyMulticlass(3, 3)
    X, Y = multiclass_data(9, n=40, separable=True)
    clf = StructuredPerceptron(model, max_iter=100).fit(X, Y)
    assert clf.score(X, Y) == 1.0
    assert clf.loss_curve_[-1] == 0.0
    assert len(clf.loss_curve_) < 100


def test_perceptron_average_stays_finite():
    big = np.finfo("d").max
    clf = StructuredPerceptron(ToyBinary(1), max_iter=2, average=True).fit([np.array([big])],
                                                                           [-1])
    assert np.isfinite(clf.w[0])


# ------------------------------------------------------------------------------ latent
def test_latent_ssvm_objective_never_increases_and_hidden_states_help():
    X, Y = xor_clusters(0)
    flat = NSlackSSVM(ToyMulticlass(3, 2), C=10.0, tol=1e-6).fit(X, Y)
    model = ToyLatentMulticlass(3, 2, k=2)
    rng = np.random.default_rng(0)
    H_init = [2 * y + int(rng.integers(0, 2)) for y in Y]
    clf = LatentSSVM(NSlackSSVM(model, C=10.0, tol=1e-6), latent_iter=10).fit(X, Y, H_init=H_init)
    curve = np.array(clf.objective_curve_)
    assert np.all(np.diff(curve) <= 1e-6)
    assert clf.score(X, Y) > flat.score(X, Y)
    assert clf.score(X, Y) == 1.0


def test_latent_ssvm_refuses_a_base_without_warm_start():
    X, Y = xor_clusters(0)
    with pytest.raises(ConfigError, match="FrankWolfeSSVM"):
        LatentSSVM(FrankWolfeSSVM(ToyLatentMulticlass(3, 2))).fit(X, Y)


# ---------------------------------------------------------------------- downhill simplex
def test_primal_downhill_simplex_approaches_the_optimum():
    model = ToyMulticlass(2, 2)
    X, Y = multiclass_data(10, n_features=2, n_classes=2)
    best, _ = exact_primal_optimum(model, X, Y, 1.0)
    clf = PrimalDSStructuredSVM(model, C=1.0, max_iter=2000).fit(X, Y)
    assert objective_primal(model, clf.w, X, Y, 1.0) == pytest.approx(best, rel=1e-3)
    assert clf.primal_objective_curve_[-1] == pytest.approx(
        objective_primal(model, clf.w, X, Y, 1.0))


# ------------------------------------------------------------- the squared-hinge fast path
@pytest.mark.parametrize("case", range(len(CASES)))
def test_squared_hinge_reaches_the_squared_optimum(case):
    model, data, C = CASES[case]
    X, Y = data(case)
    best, w_best = exact_squared_optimum(model, X, Y, C)
    clf = SquaredHingeSSVM(model, C=C, tol=1e-6, dcd_tol=1e-6).fit(X, Y)
    assert clf.primal_objective_curve_[-1] == pytest.approx(best, rel=1e-5, abs=1e-6)
    assert clf.objective_curve_[-1] <= best + 1e-6
    assert np.allclose(clf.w, w_best, atol=1e-3)


def test_subgradient_auto_rate_is_c_n_decayed():
    # PyStruct's 'auto': a base rate of C * n_samples, decayed by (decay_t0 + t) ** -1
    model = ToyMulticlass(3, 3)
    X, Y = multiclass_data(6)
    auto = SubgradientSSVM(model, C=0.5, max_iter=4, break_on_no_constraints=False).fit(X, Y)
    given = SubgradientSSVM(model, C=0.5, max_iter=4, learning_rate=0.5 * len(X),
                            break_on_no_constraints=False).fit(X, Y)
    np.testing.assert_array_equal(auto.w, given.w)
    # one example, one step from w = 0: w = (C n / decay_t0) * (phi(x, y) - phi(x, y_hat))
    one = SubgradientSSVM(model, C=2.0, max_iter=1).fit(X[:1], Y[:1])
    y_hat = model.loss_augmented_inference(X[0], Y[0], np.zeros(9))
    step = model.joint_feature(X[0], Y[0]) - model.joint_feature(X[0], y_hat)
    np.testing.assert_allclose(one.w, 2.0 * 1 / 10 * step)


def test_subgradient_latent_starts_from_init_latent():
    model = ToyLatentMulticlass(3, 3, k=2)
    X, Y = multiclass_data(6)
    clf = SubgradientLatentSSVM(model, C=1.0, max_iter=1)
    assert (clf.momentum, clf.learning_rate) == (0.0, "auto")  # PyStruct's defaults
    clf.fit(X[:1], Y[:1])
    # w = 0 scores every sub-class alike; the first completion is init_latent's (2 * y)
    h0 = model.init_latent(X[:1], Y[:1])[0]
    assert h0 == 2 * Y[0]
    h_hat = model.loss_augmented_inference(X[0], h0, np.zeros(model.size_joint_feature))
    step = model.joint_feature(X[0], h0) - model.joint_feature(X[0], h_hat)
    np.testing.assert_allclose(clf.w, 1.0 * 1 / 10 * step)
    # H_init chooses the first completion instead: the other sub-class of the label
    other = SubgradientLatentSSVM(model, C=1.0, max_iter=1).fit(X[:1], Y[:1],
                                                                H_init=[2 * Y[0] + 1])
    step = model.joint_feature(X[0], 2 * Y[0] + 1) - model.joint_feature(X[0], h_hat)
    np.testing.assert_allclose(other.w, 0.1 * step)
    assert clf.predict_latent(X[:1]) == [model.inference(X[0], clf.w)]
    with pytest.raises(ConfigError, match="H_init has 2 entries for 1 inputs"):
        SubgradientLatentSSVM(model).fit(X[:1], Y[:1], H_init=[0, 1])
