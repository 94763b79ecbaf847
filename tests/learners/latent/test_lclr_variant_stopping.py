"""The LCLR-variant's stall rule, its inexact restricted solves, and the pooled scores of
cached structures that the alternating loop reads instead of one sparse dot per structure."""

import numpy as np
import pytest

import latentstruct.learners.latent.alternating as alternating
from latentstruct.data.sparse import SparseVector
from latentstruct.exceptions import ConfigError
from latentstruct.learners import LCLR, LCLRVariant
from latentstruct.learners.latent.alternating import STALL_PATIENCE, _best_cached_scores
from latentstruct.solvers.dcd import ConstraintPool
from latentstruct.testing import make_bag_problem


def _first_stall(curve, tol):
    """Iteration (1-based) at which STALL_PATIENCE consecutive relative changes < tol end."""
    calm = 0
    for t in range(1, len(curve)):
        change = abs(curve[t] - curve[t - 1]) / max(abs(curve[t - 1]), 1e-12)
        calm = calm + 1 if change < tol else 0
        if calm >= STALL_PATIENCE:
            return t
    return None


def test_best_cached_scores_is_the_max_over_each_cache():
    rng = np.random.default_rng(0)
    pool = ConstraintPool(30, 6)
    cache = {g: [] for g in range(6)}
    for g in (1, 2, 4):
        for _ in range(rng.integers(1, 5)):
            idx = np.sort(rng.choice(30, size=7, replace=False))
            phi = SparseVector(idx, rng.normal(size=7))
            pool.add(g, -phi, 1.0)
            cache[g].append(phi)
    # a replaced positive: inactive constraints must not count
    k = pool.add(0, SparseVector(np.array([3]), np.array([50.0])), 1.0)
    pool.deactivate(k)
    w = rng.normal(size=30)
    best = _best_cached_scores(pool, w)
    for g in range(6):
        if cache[g]:
            assert best[g] == pytest.approx(max(phi.dot(w) for phi in cache[g]), rel=1e-12)
        else:
            assert best[g] == -np.inf


def test_stall_rule_stops_where_the_curve_says():
    task, X, y = make_bag_problem(n_examples=200, bag_size=6, random_state=3)
    full = LCLRVariant(task, init="zeros", tol=None, max_iter=25,
                       random_state=0).fit(X, y)
    tol = 0.01  # this curve's relative changes: 0.09, 0.53, 0.067, 0.0078, 0.0038, 0.0002, ...
    expected = _first_stall(full.objective_curve_, tol)
    assert expected is not None and expected < full.n_iter_
    m = LCLRVariant(task, init="zeros", tol=tol, max_iter=25,
                    random_state=0).fit(X, y)
    assert m.stop_reason_ == "tol" and m.converged_ and m.n_iter_ == expected
    # the same run up to the stop: identical curve and weights as the run without the rule
    np.testing.assert_array_equal(m.objective_curve_, full.objective_curve_[:expected + 1])
    short = LCLRVariant(task, init="zeros", tol=None,
                        max_iter=expected, random_state=0).fit(X, y)
    np.testing.assert_array_equal(m.coef_, short.coef_)


def test_tol_none_runs_max_iter_and_params():
    task, X, y = make_bag_problem(n_examples=60, bag_size=3, random_state=1)
    m = LCLRVariant(task, init="zeros", tol=None, max_iter=3,
                    random_state=0).fit(X, y)
    assert m.n_iter_ == 3 and m.stop_reason_ == "max_iter"
    params = LCLRVariant().get_params()
    assert params["tol"] == 1e-3 and params["dcd_gap_tol"] is None and params["dcd_tol"] == 1e-3
    with pytest.raises(ConfigError):
        LCLRVariant(task, dcd_gap_tol=-1.0).fit(X, y)


@pytest.mark.filterwarnings("ignore::latentstruct.exceptions.ConvergenceWarning")
def test_dcd_gap_tol_ends_each_restricted_solve(monkeypatch):
    task, X, y = make_bag_problem(n_examples=120, bag_size=4, random_state=5)
    calls = []
    orig = alternating.solve_grouped_dcd

    def spy(pool, C, **kw):
        res = orig(pool, C, **kw)
        calls.append((kw.get("gap_tol"), res))
        return res

    monkeypatch.setattr(alternating, "solve_grouped_dcd", spy)
    # a projected-gradient tolerance no solve reaches: only the gap rule can end them
    LCLRVariant(task, init="zeros", tol=None, max_iter=4,
                dcd_tol=1e-14, dcd_max_iter=100000, dcd_gap_tol=1e-3, random_state=0).fit(X, y)
    assert len(calls) == 4
    for gap_tol, res in calls:
        assert gap_tol == 1e-3 and res.converged
        assert res.gap <= 1e-3 * abs(res.primal)
    calls.clear()
    LCLRVariant(task, init="zeros", tol=None, max_iter=2,
                dcd_gap_tol=None, random_state=0).fit(X, y)
    assert [g for g, _ in calls] == [None, None]
    calls.clear()
    LCLR(task, init="zeros", max_iter=2, random_state=0).fit(X, y)
    assert calls and all(g is None for g, _ in calls)  # LCLR's solves are unchanged

