"""Global constraints on a chain (count, if-then, contiguous): the ILP and the k-best-first
decoder against brute-force enumeration on many tiny random instances."""

import itertools

import numpy as np
import pytest

import latentstruct.inference.global_constraints as gc
from latentstruct.inference.global_constraints import (
    Contiguous,
    CountBound,
    GlobalConstraints,
    Implication,
    constrained_argmax,
)
from latentstruct.exceptions import InferenceError


def _score(y, unary, trans, start, end):
    T = len(y)
    return (unary[np.arange(T), y].sum() + trans[y[:-1], y[1:]].sum() + start[y[0]]
            + end[y[-1]])


def _random_constraints(rng, L):
    found = []
    for _ in range(rng.integers(1, 4)):
        kind = rng.integers(3)
        labels = tuple(int(v) for v in rng.choice(L, rng.integers(1, L + 1), replace=False))
        if kind == 0:
            low = int(rng.integers(0, 3))
            high = None if rng.random() < 0.5 else low + int(rng.integers(0, 3))
            found.append(CountBound(labels, low, high))
        elif kind == 1:
            then = tuple(int(v) for v in rng.choice(L, rng.integers(1, L + 1), replace=False))
            found.append(Implication(labels, then))
        else:
            found.append(Contiguous(int(rng.integers(L))))
    return GlobalConstraints(L, found)


def _instances(seed, n):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        T, L = int(rng.integers(1, 6)), int(rng.integers(1, 4))
        g = _random_constraints(rng, L)
        unary, trans = rng.normal(size=(T, L)), rng.normal(size=(L, L))
        start, end = rng.normal(size=L), rng.normal(size=L)
        if rng.random() < 0.3:  # a forbidden transition (a local constraint) as -inf
            trans[rng.integers(L), rng.integers(L)] = -np.inf
        best = max((_score(np.array(y), unary, trans, start, end)
                    for y in itertools.product(range(L), repeat=T) if g.allows(np.array(y))),
                   default=-np.inf)
        yield g, unary, trans, start, end, best


def _check(result, g, unary, trans, start, end, best):
    if np.isneginf(best):
        assert result.status == "infeasible" and result.structure is None
        return
    assert result.status == "exact"
    y = result.structure
    assert g.allows(y)
    assert _score(y, unary, trans, start, end) == pytest.approx(best, abs=1e-9)
    assert result.score == pytest.approx(best, abs=1e-7)


def test_constrained_argmax_is_the_best_labelling_that_keeps_the_constraints():
    used_ilp = 0
    for g, unary, trans, start, end, best in _instances(0, 300):
        result = constrained_argmax(unary, trans, start, end, g)
        _check(result, g, unary, trans, start, end, best)
        used_ilp += bool(result.stats.get("ilp"))
    assert 5 <= used_ilp <= 100  # both paths were exercised: the k-best shortcut and the ILP


def test_the_ilp_alone_matches_enumeration(monkeypatch):
    # no k-best shortcut: every instance is solved by the ILP (or found infeasible by it)
    monkeypatch.setattr(gc, "KBEST_BEFORE_ILP", 0)
    for g, unary, trans, start, end, best in _instances(1, 150):
        result = constrained_argmax(unary, trans, start, end, g)
        assert result.stats["ilp"]
        _check(result, g, unary, trans, start, end, best)


def test_each_constraint_says_whether_a_labelling_keeps_it():
    y = np.array([0, 0, 1, 0, 2])
    assert not Contiguous(0).holds(y) and Contiguous(1).holds(y) and Contiguous(2).holds(y)
    assert CountBound((0,), 3, 3).holds(y) and not CountBound((0, 1), 0, 3).holds(y)
    assert CountBound((2,), 1).holds(y) and not CountBound((2,), 2).holds(y)
    assert Implication((2,), (1,)).holds(y) and not Implication((1,), (3,)).holds(y)
    assert Implication((3,), (4,)).holds(y)  # nothing labelled 3: holds
    g = GlobalConstraints(5, [Contiguous(1), Contiguous(0)])
    assert g.first_violation(y) == Contiguous(0) and not g.allows(y)


def test_global_constraints_are_checked_hashable_and_deduplicated():
    a = GlobalConstraints(3, [Contiguous(1), CountBound([2, 0], 1), Contiguous(1)])
    b = GlobalConstraints(3, [Contiguous(1), CountBound((0, 2), 1)])
    assert a == b and hash(a) == hash(b) and len(a.constraints) == 2
    assert a.constraints[1].labels == (0, 2)
    with pytest.raises(ValueError, match="label ids in 0..2"):
        GlobalConstraints(3, [Contiguous(3)])
    with pytest.raises(ValueError, match="low <= high"):
        GlobalConstraints(3, [CountBound((0,), 2, 1)])
    with pytest.raises(ValueError, match="expected CountBound"):
        GlobalConstraints(3, ["contiguous 1"])
    with pytest.raises(AttributeError, match="immutable"):
        a.n_labels = 4


def test_an_empty_chain_and_a_failed_solve():
    g = GlobalConstraints(2, [Contiguous(0)])
    empty = constrained_argmax(np.zeros((0, 2)), np.zeros((2, 2)), None, None, g)
    assert empty.structure.shape == (0,) and empty.score == 0.0
    with pytest.raises(ValueError, match="the constraints 2"):
        constrained_argmax(np.zeros((3, 3)), np.zeros((3, 3)), None, None, g)


def test_a_solver_failure_is_an_error_not_a_labelling(monkeypatch):
    from latentstruct.inference.result import DecodeResult

    class Failing:
        def solve(self, *args, **kwargs):
            return DecodeResult(None, -np.inf, "error", {"model_status": "Solve error"})

    monkeypatch.setattr(gc, "_model", lambda *a: Failing())
    monkeypatch.setattr(gc, "KBEST_BEFORE_ILP", 0)
    g = GlobalConstraints(2, [Contiguous(0)])
    unary = np.array([[5.0, 0.0], [0.0, 5.0], [5.0, 0.0]])  # the free best breaks the rule
    with pytest.raises(InferenceError, match="status 'error'"):
        constrained_argmax(unary, np.zeros((2, 2)), None, None, g)


def test_graph_argmax_keeps_counts_and_if_thens_exactly():
    from latentstruct.inference.graph import graph_argmax

    rng = np.random.default_rng(5)
    infeasible = 0
    for _ in range(150):
        n, K = int(rng.integers(1, 5)), int(rng.integers(1, 4))
        edges = np.array([(i, j) for i in range(n) for j in range(n)
                          if i < j and rng.random() < 0.6], dtype=np.int64).reshape(-1, 2)
        unary = rng.normal(size=(n, K))
        pairwise = (rng.normal(size=(len(edges), K, K)) if rng.random() < 0.5
                    else rng.normal(size=(K, K)))
        found = []
        for _ in range(int(rng.integers(1, 3))):
            labels = tuple(int(v) for v in rng.choice(K, rng.integers(1, K + 1), replace=False))
            if rng.random() < 0.5:
                low = int(rng.integers(0, 3))
                found.append(CountBound(labels, low, None if rng.random() < 0.5
                                        else low + int(rng.integers(0, 2))))
            else:
                then = tuple(int(v) for v in rng.choice(K, rng.integers(1, K + 1), replace=False))
                found.append(Implication(labels, then))
        g = GlobalConstraints(K, found)

        def score(y):
            y = np.asarray(y)
            s = unary[np.arange(n), y].sum()
            if len(edges):
                pw = (pairwise[np.arange(len(edges)), y[edges[:, 0]], y[edges[:, 1]]]
                      if pairwise.ndim == 3 else pairwise[y[edges[:, 0]], y[edges[:, 1]]])
                s += pw.sum()
            return s

        best = max((score(y) for y in itertools.product(range(K), repeat=n)
                    if g.allows(np.array(y))), default=-np.inf)
        result = graph_argmax(unary, pairwise, edges, g)
        if np.isneginf(best):
            infeasible += 1
            assert result.status == "infeasible" and result.structure is None
            continue
        assert result.status == "exact" and g.allows(result.structure)
        assert score(result.structure) == pytest.approx(best, abs=1e-7)
    assert infeasible > 5


def test_a_contiguous_label_is_refused_on_a_graph():
    from latentstruct.exceptions import InputError
    from latentstruct.inference.graph import graph_argmax

    unary = np.array([[0.0, 5.0], [5.0, 0.0], [0.0, 5.0]])
    with pytest.raises(InputError, match="a rule of chains"):
        graph_argmax(unary, np.zeros((2, 2)), np.array([[0, 1], [1, 2]]),
                     GlobalConstraints(2, [Contiguous(1)]))
