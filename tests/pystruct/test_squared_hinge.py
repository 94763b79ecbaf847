"""SquaredHingeSSVM when its DCD stalls: the working set goes to HiGHS' exact QP, and the
fit still reaches the squared-slack optimum (against enumeration + SLSQP)."""

from __future__ import annotations

import numpy as np
import pytest

from latentstruct.pystruct.learners import SquaredHingeSSVM
from latentstruct.solvers.qp import solve_primal

from toy_models import ToyChain, ToyMulticlass, chain_data, exact_squared_optimum, multiclass_data


@pytest.mark.parametrize("C", [0.1, 1.0, 7.0])
def test_squared_primal_qp_matches_the_closed_form(C):
    # one constraint w + xi >= 1: w = 2C / (1 + 2C), xi = 1 / (1 + 2C)
    sol = solve_primal(np.array([[1.0]]), np.array([1.0]), np.array([0]), np.array([C]),
                       squared=True)
    w, xi = 2 * C / (1 + 2 * C), 1 / (1 + 2 * C)
    assert sol.w[0] == pytest.approx(w, rel=1e-6)
    assert sol.dual == pytest.approx(0.5 * w * w + C * xi * xi, rel=1e-6)


@pytest.mark.parametrize("model, data, C", [(ToyMulticlass(3, 3), multiclass_data, 10.0),
                                            (ToyChain(2, 3), chain_data, 5.0)])
def test_a_stalled_dcd_hands_the_working_set_to_the_exact_qp(model, data, C):
    X, Y = data(3)
    best, w_best = exact_squared_optimum(model, X, Y, C)
    # one epoch never reaches dcd_tol=1e-9: the first solve stalls and HiGHS takes over
    clf = SquaredHingeSSVM(model, C=C, tol=1e-7, dcd_tol=1e-9, dcd_max_iter=1).fit(X, Y)
    assert clf.solver_ == "dcd+highs-qp"
    assert clf.primal_objective_curve_[-1] == pytest.approx(best, rel=1e-5, abs=1e-6)
    assert np.allclose(clf.w, w_best, atol=1e-3)
    # with room to converge the DCD alone reaches the same optimum
    fast = SquaredHingeSSVM(model, C=C, tol=1e-7, dcd_tol=1e-7).fit(X, Y)
    assert fast.solver_ == "dcd"
    assert fast.primal_objective_curve_[-1] == pytest.approx(best, rel=1e-4, abs=1e-6)


def test_a_fit_does_not_depend_on_what_was_decoded_before():
    # warm HiGHS solvers break LP ties by their last basis; each fit starts cold
    from latentstruct.pystruct.datasets import generate_crosses_explicit
    from latentstruct.pystruct.learners import OneSlackSSVM
    from latentstruct.pystruct.models import GraphCRF
    from latentstruct.pystruct.utils import make_grid_edges

    X, Y = generate_crosses_explicit(n_samples=8, noise=10, size_x=6, seed=0)
    Xg = [(x.reshape(-1, 3), make_grid_edges(x)) for x in X]
    Yg = [y.ravel() for y in Y]

    def fit():
        return SquaredHingeSSVM(GraphCRF(n_states=3, n_features=3), C=1, tol=0.1).fit(Xg, Yg).w

    first = fit()
    OneSlackSSVM(GraphCRF(n_states=3, n_features=3), C=100, tol=0.1).fit(Xg[::-1], Yg[::-1])
    assert np.array_equal(fit(), first)


def test_a_qp_that_stalls_highs_active_set_is_solved_through_the_other_form():
    # a 16 x 15 one-slack working set (GraphCRF on crosses, C=1) on which HiGHS' active-set
    # QP cycled for ever on the primal; the iteration limit hands it to the dual
    from pathlib import Path

    from scipy.optimize import minimize

    from latentstruct.solvers.qp import WorkingSet

    data = np.load(Path(__file__).parent / "data" / "stalling_qp.npz")
    D, b, limits = data["D"], data["b"], data["limits"]
    ws = WorkingSet(D.shape[1])
    for d, b_k, g in zip(D, b, data["group"]):
        ws.add(d, b_k, g)
    solution = ws.solve(limits)
    n = D.shape[1]
    reference = minimize(lambda z: 0.5 * z[:n] @ z[:n] + limits[0] * z[n],
                         np.r_[np.zeros(n), b.max()], method="SLSQP",
                         constraints=[{"type": "ineq", "fun": lambda z: D @ z[:n] + z[n] - b}],
                         bounds=[(None, None)] * n + [(0, None)],
                         options={"ftol": 1e-12, "maxiter": 1000})
    assert solution.dual == pytest.approx(reference.fun, rel=1e-6)
    xi = max(0.0, float(np.max(b - D @ solution.w)))
    assert 0.5 * solution.w @ solution.w + limits[0] * xi == pytest.approx(reference.fun, rel=1e-6)
