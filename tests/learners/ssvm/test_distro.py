"""DISTRO (Srikumar & Manning 2014): inference, gradients, the A = I reduction, the learner."""

import itertools
import warnings

import numpy as np
import pytest
from sklearn.base import clone

from latentstruct.exceptions import ConfigError, InferenceError
from latentstruct.learners import DISTRO, SGDStructuredSVM, check_compatible
from latentstruct.learners.ssvm.distro_data import DistroData as _Data
from latentstruct.learners.ssvm.distro_model import DistroParams
from latentstruct.tasks import ChainStructure, ChunkTask

LABELS = ["B-A", "I-A", "O"]


def random_file(tmp_path, seed, n_sent=6, max_len=4, vocab=5, learnable=False):
    """Random sentences; with ``learnable`` each word's label is a function of the word."""
    rng = np.random.default_rng(seed)
    lines = []
    for _ in range(n_sent):
        for _ in range(int(rng.integers(1, max_len + 1))):
            k = int(rng.integers(vocab))
            label = LABELS[k % 3] if learnable else LABELS[rng.integers(3)]
            lines.append(f"w{k} P{rng.integers(3)} {label}")
        lines.append("")
    p = tmp_path / f"r{seed}.txt"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return p


def tiny_task(tmp_path, seed, **kw):
    task = ChunkTask(window=0, affix_length=1) if kw.get("learnable") else \
        ChunkTask(window=1, affix_length=1)
    ds = task.read(random_file(tmp_path, seed, **kw))
    task.fit(ds)
    return task, task.featurize(ds), task.encode_targets(ds.targets)


def random_params(task, d, rng):
    F, L = task.n_attributes, task.n_labels
    A = rng.normal(size=(d, L))
    A /= np.linalg.norm(A, axis=0)
    return DistroParams(rng.normal(size=(F, d)), 1.0, rng.normal(size=(d, d)), rng.normal(size=d),
                        rng.normal(size=d), A)


def tensor_score(task, x, y, p: DistroParams) -> float:
    """w · Φ_A(x, y) with Φ_A built literally as sums of tensor products (Eqs. 3–4)."""
    parts = task.structure_.label_factored_parts(x)
    R = parts.rows.toarray()
    A = p.A
    phi_E = sum(np.kron(R[t], A[:, y[t]]) for t in range(len(y)))          # vec(φ_t ⊗ a_y)
    phi_T = sum(np.kron(A[:, y[t]], A[:, y[t + 1]]) for t in range(len(y) - 1)) \
        if len(y) > 1 else np.zeros(A.shape[0] ** 2)
    return float(p.emission().ravel() @ phi_E + p.W_T.ravel() @ phi_T
                 + p.start @ A[:, y[0]] + p.end @ A[:, y[-1]])


def brute_force(task, x, p, y_gold=None):
    T, L = len(task.structure_.label_factored_parts(x).rows.toarray()), task.n_labels
    best, arg = -np.inf, None
    for y in itertools.product(range(L), repeat=T):
        s = tensor_score(task, x, list(y), p)
        if y_gold is not None:
            s += float(np.sum(np.asarray(y) != y_gold))
        if s > best + 1e-12:
            best, arg = s, np.array(y)
    return arg, best


@pytest.mark.parametrize("seed", range(12))
def test_distro_inference_equals_brute_force(tmp_path, seed):
    task, X, Y = tiny_task(tmp_path, seed)
    rng = np.random.default_rng(seed)
    learner = DISTRO(task, n_components=int(rng.integers(1, 5)))
    p = random_params(task, learner.n_components, rng)
    batch = task.structure_.label_factored_batch(X)
    for i in range(len(X)):
        rows, offsets = batch.example_rows(np.array([i]))
        for gold in (None, Y[i]):
            z, unary, chain = learner._decode(p, rows, offsets, gold)
            ref, best = brute_force(task, X[i], p, gold)
            np.testing.assert_array_equal(z, ref)
            got = p.structure_scores(unary, offsets, z, chain)[0]
            if gold is not None:
                got += float(np.sum(z != gold))
            assert got == pytest.approx(best, abs=1e-9)
            assert p.structure_scores(unary, offsets, Y[i], chain)[0] == \
                pytest.approx(tensor_score(task, X[i], Y[i], p), abs=1e-9)


def _hinge(task, learner, p, X, Y, i):
    batch = task.structure_.label_factored_batch(X)
    rows, offsets = batch.example_rows(np.array([i]))
    return learner._hinge(p, rows, offsets, Y[i])[0], rows, offsets


@pytest.mark.parametrize("seed", range(8))
def test_gradients_match_finite_differences_of_the_hinge(tmp_path, seed):
    task, X, Y = tiny_task(tmp_path, 50 + seed)
    rng = np.random.default_rng(seed)
    learner = DISTRO(task, n_components=3)
    learner.n_inexact_decodes_ = 0
    p = random_params(task, 3, rng)
    i = int(rng.integers(len(X)))
    h0, rows, offsets = _hinge(task, learner, p, X, Y, i)
    z, _, _ = learner._decode(p, rows, offsets, Y[i])
    # A: the analytic gradient of score(ŷ) − score(y)
    U = p.token_embeddings(rows)
    G = p.label_gradient(U, offsets, z, Y[i])
    eps = 1e-6
    num = np.zeros_like(p.A)
    for idx in np.ndindex(*p.A.shape):
        q = p.copy()
        q.A[idx] += eps
        hp = _hinge(task, learner, q, X, Y, i)[0]
        q.A[idx] -= 2 * eps
        hm = _hinge(task, learner, q, X, Y, i)[0]
        num[idx] = (hp - hm) / (2 * eps)
    if h0 > 1e-3:  # on the hinge's linear piece (a zero hinge has zero gradient)
        np.testing.assert_allclose(G, num, atol=1e-5)
    # W: weight_step(coef) subtracts coef * gradient
    q = p.copy()
    q.weight_step(rows, offsets, z, Y[i], 1.0)
    for name in ("V", "W_T", "start", "end"):
        grad = getattr(p, name) - getattr(q, name)
        arr = getattr(p, name)
        num = np.zeros_like(arr)
        for idx in np.ndindex(*arr.shape):
            r = p.copy()
            getattr(r, name)[idx] += eps
            hp = _hinge(task, learner, r, X, Y, i)[0]
            getattr(r, name)[idx] -= 2 * eps
            hm = _hinge(task, learner, r, X, Y, i)[0]
            num[idx] = (hp - hm) / (2 * eps)
        if h0 > 1e-3:
            np.testing.assert_allclose(grad, num, atol=1e-5, err_msg=name)


def _one_hot_weights(task, p: DistroParams) -> np.ndarray:
    """The one-hot weight vector of DISTRO parameters with A = I (d = L)."""
    return np.concatenate([p.emission().ravel(), p.W_T.ravel(), p.start, p.end])


@pytest.mark.parametrize("seed", range(6))
def test_identity_label_matrix_reduces_to_the_one_hot_ssvm(tmp_path, seed):
    """With A = I, DISTRO's scores, decodes and SGD steps are the one-hot SSVM's."""
    task, X, Y = tiny_task(tmp_path, 200 + seed, n_sent=30)
    L = task.n_labels
    rng = np.random.default_rng(seed)
    p = random_params(task, L, rng)
    p.A = np.eye(L)
    w = _one_hot_weights(task, p)
    distro = DISTRO(task, n_components=L, lambda1=0.05, batch_size=7, label_init="onehot",
                    update_labels=False)
    distro._validate()
    distro.n_inexact_decodes_ = 0
    sgd = SGDStructuredSVM(task, lambda1=0.05, batch_size=7)
    sgd._lambda1 = 0.05
    sgd.n_inexact_decodes_ = 0
    # same loss-augmented decodes and objective at a random real-valued point
    Xb = task.structure_.as_batch(X)
    batch = task.structure_.label_factored_batch(X)
    rows, offsets = batch.example_rows(np.arange(len(X)))
    z, _, _ = distro._decode(p, rows, offsets, np.concatenate(Y))
    np.testing.assert_array_equal(z, np.concatenate(task.structure_.argmax_batch(Xb, w, Y)))
    data = _Data(batch, np.concatenate(Y), len(X))
    assert distro._objective(p, data) - distro._lambda2 * L == pytest.approx(
        sgd._objective(w, Xb, Y, np.arange(len(X))), rel=1e-12)
    # two epochs of mini-batch SGD from that point, same permutations
    state = [w.copy(), 1.0]
    sgd._epochs(state, Xb, Y, np.arange(len(X)), 2, np.random.default_rng(7), 0.3)
    distro._weight_epochs(p, data, 2, np.random.default_rng(7), 0.3)
    np.testing.assert_allclose(_one_hot_weights(task, p), state[0] * state[1], atol=1e-10)


def test_fixed_identity_fit_matches_sgd_ssvm_fit(tmp_path):
    """End to end: fit() of both learners, same seed and step size, weights agree."""
    task, X, Y = tiny_task(tmp_path, 7, n_sent=25)
    L = task.n_labels
    a = DISTRO(task, n_components=L, label_init="onehot", update_labels=False, n_iter=0,
               weight_epochs=3, eta0=0.31, lambda1=0.0, batch_size=1).fit(X, Y)
    b = SGDStructuredSVM(task, n_epochs=3, eta0=0.31, lambda1=0.0, batch_size=1).fit(X, Y)
    np.testing.assert_allclose(_one_hot_weights(task, a._params), b.coef_, atol=1e-10)
    assert a.predict(X) is not None
    for pa, pb in zip(a.predict(X), b.predict(X)):
        np.testing.assert_array_equal(pa, pb)


def test_fit_learns_unit_columns_and_records_attributes(tmp_path):
    task, X, Y = tiny_task(tmp_path, 3, n_sent=40, vocab=8, learnable=True)
    m = DISTRO(task, n_components=2, lambda1=0.01, lambda2=0.01, n_iter=2, weight_epochs=3,
               label_epochs=2, n_restarts=2)
    assert m.fit(X, Y) is m
    np.testing.assert_allclose(np.linalg.norm(m.label_matrix_, axis=0), 1.0, atol=1e-12)
    assert m.label_matrix_.shape == (2, task.n_labels)
    assert 1 <= m.effective_rank_ <= 2
    np.testing.assert_allclose(m.singular_values_, np.linalg.svd(m.label_matrix_, compute_uv=False))
    # initial w-step, then (A-step, w-step) per alternation
    assert len(m.objective_curve_) == 1 + 2 * 2
    assert len(m.restart_objectives_) == 2
    # the descent guard: the objective never rises from one phase to the next
    assert all(b <= a * (1 + 1e-9) for a, b in zip(m.objective_curve_, m.objective_curve_[1:]))
    assert m.n_reverted_phases_ >= 0
    assert m.restart_objectives_[m.restart_] == min(m.restart_objectives_)
    # learning made progress: at w = 0 every hinge is the sentence length (all labels tie)
    at_zero = np.mean([len(y) for y in Y]) + 0.01 * np.linalg.svd(m.label_matrix_, compute_uv=False).sum()
    assert m.objective_curve_[-1] < 0.9 * at_zero
    assert m.score(X, Y) > 0.9
    np.testing.assert_allclose(m.label_similarity().diagonal(), 1.0)
    # reproducible by default
    m2 = DISTRO(task, n_components=2, lambda1=0.01, lambda2=0.01, n_iter=2, weight_epochs=3,
                label_epochs=2, n_restarts=2).fit(X, Y)
    np.testing.assert_array_equal(m.coef_, m2.coef_)
    c = clone(m)
    strip = lambda e: {k: v for k, v in e.get_params(deep=False).items() if k != "structure"}  # noqa: E731
    assert strip(c) == strip(m) and not hasattr(c, "coef_")


def test_nuclear_norm_lowers_the_rank(tmp_path):
    task, X, Y = tiny_task(tmp_path, 11, n_sent=40, vocab=8)
    ranks = []
    for lam2 in (0.0, 5.0):
        m = DISTRO(task, n_components=3, lambda1=0.01, lambda2=lam2, n_iter=2, weight_epochs=2,
                   label_epochs=3, n_restarts=1, eta0=0.5).fit(X, Y)
        ranks.append(m.effective_rank_)
    assert ranks == [3, 1]


@pytest.mark.parametrize("params,match", [
    ({"n_components": 0}, "n_components"),
    ({"lambda2": -1.0}, "lambda2"),
    ({"lambda1": -0.1}, "lambda1"),
    ({"threshold": "soft"}, "threshold"),
    ({"eta0": "fast"}, "eta0"),
    ({"eta0": 8.0, "lambda1": 0.25}, "below 1"),
    ({"label_init": "zeros"}, "label_init"),
    ({"n_components": 4096, "max_weights": 1000}, "max_weights"),
])
def test_bad_hyperparameters(tmp_path, params, match):
    task, X, Y = tiny_task(tmp_path, 1)
    with pytest.raises(ConfigError, match=match):
        DISTRO(task, **params).fit(X, Y)


def test_inexact_decoder_is_caught(tmp_path):
    task, X, Y = tiny_task(tmp_path, 2, n_sent=10)

    class BrokenChain(ChainStructure):
        def argmax_from_part_scores_batch(self, batch_offsets, unary, transition, start, end, Y=None):
            z = super().argmax_from_part_scores_batch(batch_offsets, unary, transition, start, end, Y)
            return (z + 1) % self.n_labels if Y is not None else z

    class Broken(type(task)):
        structure_class = BrokenChain

    broken = Broken(window=1, affix_length=1)
    broken.__dict__.update({k: v for k, v in task.__dict__.items() if k.endswith("_")})
    broken._build_structure()
    with pytest.raises(InferenceError, match="not exact"):
        DISTRO(broken, n_components=2, n_iter=1, weight_epochs=2, label_epochs=1, n_restarts=1,
               eta0=0.5).fit(X, Y)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        m = DISTRO(broken, n_components=2, n_iter=1, weight_epochs=2, label_epochs=1,
                   n_restarts=1, eta0=0.5, check_inference=False).fit(X, Y)
    assert m.n_inexact_decodes_ > 0
    assert any("loss-augmented decodes" in str(x.message) for x in w)


def test_tasks_without_the_capability_are_refused_before_data():
    from latentstruct.tasks import get_task_class

    with pytest.raises(ConfigError, match="label-factored"):
        check_compatible(get_task_class("translit"), {}, DISTRO, {})


def test_descent_guard_undoes_a_phase_that_raises_the_objective(tmp_path):
    task, X, Y = tiny_task(tmp_path, 5, n_sent=40, vocab=8, learnable=True)
    kw = dict(n_components=3, lambda1=0.01, n_iter=3, weight_epochs=2, label_epochs=2,
              eta0=0.5, label_eta0=500.0)  # A-steps far too large: they wreck the labels
    guarded = DISTRO(task, **kw).fit(X, Y)
    assert guarded.n_reverted_phases_ >= 1
    curve = guarded.objective_curve_
    assert all(b <= a * (1 + 1e-9) for a, b in zip(curve, curve[1:]))
    free = DISTRO(task, descent_guard=False, **kw).fit(X, Y)
    assert any(b > a for a, b in zip(free.objective_curve_, free.objective_curve_[1:]))
    assert guarded.objective_curve_[-1] < free.objective_curve_[-1]
