import warnings

import numpy as np
import pytest
from sklearn.base import clone

from latentstruct.exceptions import ConfigError, ConvergenceWarning, InferenceError, NotFittedError
from latentstruct.learners import StructuredSVM
from latentstruct.tasks import ChainStructure, ChunkTask
from latentstruct.testing import all_sequences

TINY = "a X B-A\nb Y B-B\n\nb Y B-B\nc Z O\na X I-A\n\nc Z O\na Y B-A\n"


@pytest.fixture
def tiny(tmp_path):
    p = tmp_path / "t.txt"
    p.write_text(TINY, encoding="utf-8")
    task = ChunkTask(window=0, affix_length=1)
    ds = task.read(p)
    task.fit(ds)
    return task, task.featurize(ds), task.encode_targets(ds.targets)


def exact_primal(task, X, Y, C, exact_qp):
    """Solve the full margin-rescaled QP (every labelling enumerated) exactly.

    min 1/2 w.w + C xi.xi  s.t.  D w + xi_g >= Delta, xi >= 0, in z = (w, xi), by the
    certified reference solver of tests/conftest.py (``exact_qp``).
    """
    n, m = task.n_features, len(X)
    rows, rhs, grp = [], [], []
    for i in range(m):
        for y in all_sequences(len(Y[i]), task.n_labels):
            loss = task.structure_.loss(Y[i], y)
            if loss == 0:
                continue
            rows.append(task.structure_.joint_feature_difference(X[i], Y[i], y).to_dense(n))
            rhs.append(loss)
            grp.append(i)
    D, b, g = np.array(rows), np.array(rhs), np.array(grp)
    A = np.block([[D, np.eye(m)[g]], [np.zeros((m, n)), np.eye(m)]])
    z, opt, _ = exact_qp(np.concatenate([np.ones(n), np.full(m, 2 * C)]), A,
                         np.concatenate([b, np.zeros(m)]))
    return opt, z[:n]


@pytest.mark.parametrize("mode", ["online", "batch"])
@pytest.mark.parametrize("C", [0.05, 1.0])
def test_tiny_structural_svm_matches_exact_qp(tiny, C, mode, exact_qp):
    task, X, Y = tiny
    opt, w_opt = exact_primal(task, X, Y, C, exact_qp)
    m = StructuredSVM(task, C=C, tol=1e-10, epsilon=0.0, max_iter=200, inner_tol=1e-9,
                      inner_max_iter=100000, random_state=0, mode=mode).fit(X, Y)
    assert m.objective_curve_[-1] == pytest.approx(opt, rel=1e-6)
    np.testing.assert_allclose(m.coef_, w_opt, atol=1e-4)
    # primal >= working-set dual at every iteration
    for p, d in zip(m.objective_curve_[1:], m.dual_curve_):
        assert p >= d - 1e-9


def test_fit_returns_self_and_learns_training_data(tiny):
    task, X, Y = tiny
    m = StructuredSVM(task, C=10.0, random_state=0)
    assert m.fit(X, Y) is m
    assert m.score(X, Y) == 1.0
    assert m.coef_.shape == (task.n_features,)
    assert m.n_iter_ == len(m.objective_curve_)


def test_max_iter_one_warns(tiny):
    task, X, Y = tiny
    with pytest.warns(ConvergenceWarning, match="max_iter=1"):
        m = StructuredSVM(task, C=1.0, max_iter=1).fit(X, Y)
    assert m.n_iter_ == 1


def test_sklearn_contract(tiny):
    task, X, Y = tiny
    m = StructuredSVM(task, C=0.3, max_iter=7)
    assert m.get_params()["C"] == 0.3
    c = clone(m)
    assert c.get_params()["max_iter"] == 7 and not hasattr(c, "coef_")
    m.set_params(C=2.0)
    assert m.C == 2.0
    with pytest.raises(NotFittedError):
        m.predict(X)


@pytest.mark.parametrize("bad", [-1.0, 0.0, "x"])
def test_invalid_C(tiny, bad):
    task, X, Y = tiny
    with pytest.raises(ConfigError, match="'C' parameter"):
        StructuredSVM(task, C=bad).fit(X, Y)


def test_wrong_decoder_is_detected(tiny):
    task, X, Y = tiny

    class BrokenChain(ChainStructure):
        def argmax_batch(self, X, w, Y=None, *, random_state=None):
            # returns a poor structure whenever loss-augmented: never the true argmax
            out = super().argmax_batch(X, w, Y)
            return [np.full_like(y, (y[0] + 1) % self.n_labels) if Y is not None else y for y in out]

    class Broken(type(task)):
        structure_class = BrokenChain

    broken = Broken.from_state(task.get_params(), *task.get_state())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        with pytest.raises(InferenceError, match="not exact"):
            StructuredSVM(broken, C=1.0, max_iter=20).fit(X, Y)


def test_batch_mode_decodes_every_example_once_per_iteration(tiny, monkeypatch):
    """Batch mode's evaluation pass is also its cutting-plane pass; online mode decodes
    each example twice per iteration (evaluation, then its mini-batch)."""
    task, X, Y = tiny
    decoded = []
    real = ChainStructure.argmax_batch

    def counting(self, Xs, w, Ys=None, **kw):
        decoded.append(len(Xs))
        return real(self, Xs, w, Ys, **kw)

    monkeypatch.setattr(ChainStructure, "argmax_batch", counting)
    counts = {}
    for mode in ("batch", "online"):
        decoded.clear()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            m = StructuredSVM(task, C=1.0, max_iter=4, tol=1e-12, mode=mode).fit(X, Y)
        counts[mode] = (sum(decoded), m.n_iter_, m.converged_)
    n = len(Y)
    total, iters, _ = counts["batch"]
    assert total == n * iters
    total, iters, converged = counts["online"]
    # a converged run's last iteration only evaluates
    assert total == n * (2 * iters - (1 if converged else 0))


def test_a_bad_mode_is_refused(tiny):
    task, X, Y = tiny
    with pytest.raises(ConfigError, match="'mode' parameter of StructuredSVM"):
        StructuredSVM(task, mode="stream").fit(X, Y)


def test_model_file_keeps_the_dual_curve_and_convergence(tiny, tmp_path):
    """A saved StructuredSVM keeps its dual curve and ``converged_``, so the final duality
    gap of a model file can be read back (``latentstruct info``)."""
    from latentstruct.learners.persistence import load_trained, save_trained

    task, X, Y = tiny
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for max_iter in (1, 30):
            m = StructuredSVM(task, max_iter=max_iter, C=1.0).fit(X, Y)
            save_trained(tmp_path / "m.npz", task, m)
            _, m2, meta = load_trained(tmp_path / "m.npz")
            assert m2.dual_curve_ == m.dual_curve_ and len(m2.dual_curve_) == m.n_iter_
            assert m2.converged_ is m.converged_ is (max_iter == 30)
            assert meta["learner_state"]["dual_curve_"][-1] == pytest.approx(m.dual_curve_[-1])


def _noisy_chunks(tmp_path, n=80, seed=0):
    """n random sentences whose chunk tags follow the words with 15 % noise (the training
    set is not separable, so the gap closes over several outer iterations)."""
    rng = np.random.default_rng(seed)
    lines = []
    for _ in range(n):
        for _ in range(int(rng.integers(2, 7))):
            word = "abcdef"[int(rng.integers(6))]
            tag = "B-A" if word in "ab" else ("B-B" if word == "c" else "O")
            if rng.random() < 0.15:
                tag = ("B-A", "B-B", "O")[int(rng.integers(3))]
            lines.append(f"{word} {word.upper()} {tag}")
        lines.append("")
    p = tmp_path / "noisy.txt"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    task = ChunkTask(window=1, affix_length=1)
    ds = task.read(p)
    task.fit(ds)
    return task, task.featurize(ds), task.encode_targets(ds.targets)


def test_evaluate_near_skips_passes_but_follows_the_same_path_and_certifies(tmp_path):
    from latentstruct.learners.persistence import load_trained, save_trained

    task, X, Y = _noisy_chunks(tmp_path)
    kw = dict(C=0.1, tol=1e-2, batch_size=8, inner_max_iter=20, max_iter=100, random_state=3)
    every = StructuredSVM(task, **kw).fit(X, Y)
    near = StructuredSVM(task, evaluate="near", **kw).fit(X, Y)
    assert every.converged_ and near.converged_
    assert every.evaluated_iterations_ == list(range(1, every.n_iter_ + 1))
    its = near.evaluated_iterations_
    # fewer evaluation passes; the first iteration and the last (certifying) one among them
    assert its[0] == 1 and its[-1] == near.n_iter_ and len(its) < near.n_iter_
    assert near.n_iter_ >= every.n_iter_
    # skipping an evaluation does not change training: each evaluated primal and dual is
    # the one the every-iteration run had at that iteration
    for k, it in enumerate(i for i in its if i <= every.n_iter_):
        assert near.objective_curve_[k] == pytest.approx(every.objective_curve_[it - 1], rel=1e-12)
        assert near.dual_curve_[k] == pytest.approx(every.dual_curve_[it - 1], rel=1e-12)
    gap = (near.objective_curve_[-1] - near.dual_curve_[-1]) / near.objective_curve_[-1]
    assert gap <= 1e-2
    # the model file says which iterations the curves are at
    save_trained(tmp_path / "near.npz", task, near)
    _, loaded, meta = load_trained(tmp_path / "near.npz")
    assert loaded.evaluated_iterations_ == its == meta["learner_state"]["evaluated_iterations_"]
    if near.n_iter_ == every.n_iter_:
        np.testing.assert_array_equal(near.coef_, every.coef_)


def test_evaluate_option_is_checked(tiny):
    task, X, Y = tiny
    with pytest.raises((ConfigError, ValueError), match="evaluate"):
        StructuredSVM(task, evaluate="sometimes").fit(X, Y)


@pytest.mark.parametrize("mode", ["online", "batch"])
def test_violation_passes_in_blocks_train_the_same_model(tmp_path, monkeypatch, mode):
    """The violation passes decode in blocks of ``VIOLATION_BLOCK`` examples and the
    evaluation passes keep no Phi differences (only batch mode adds them): the same
    model, curves and working set, to the bit, as one block of the whole training set."""
    from latentstruct.learners.ssvm import ssvm as ssvm_module

    task, X, Y = _noisy_chunks(tmp_path, n=60, seed=2)
    kw = dict(C=0.1, tol=1e-3, batch_size=16, max_iter=30, random_state=1, mode=mode)
    fits = {}
    for block in (3, 10_000):
        monkeypatch.setattr(ssvm_module, "VIOLATION_BLOCK", block)
        fits[block] = StructuredSVM(task, **kw).fit(X, Y)
    a, b = fits[3], fits[10_000]
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.objective_curve_ == b.objective_curve_ and a.dual_curve_ == b.dual_curve_
    assert (a.n_iter_, a.n_constraints_) == (b.n_iter_, b.n_constraints_)
    assert a.n_iter_ > 2 and a.n_constraints_ > len(X)


def test_an_evaluation_pass_drops_the_differences_not_the_violations(tmp_path, monkeypatch):
    from latentstruct.learners.ssvm import ssvm as ssvm_module

    task, X, Y = _noisy_chunks(tmp_path, n=30, seed=4)
    monkeypatch.setattr(ssvm_module, "VIOLATION_BLOCK", 7)
    m = StructuredSVM(task, C=0.1, max_iter=2, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        m.fit(X, Y)
    w = m.coef_
    losses, diffs, xi = m._violations(X, Y, w)
    losses_, none, xi_ = m._violations(X, Y, w, keep_diffs=False)
    np.testing.assert_array_equal(losses, losses_)
    np.testing.assert_array_equal(xi, xi_)
    assert all(d is None for d in none)
    wrong = np.flatnonzero(losses)
    assert wrong.size and all(diffs[i] is not None for i in wrong)
    # the violations are the losses less the margins of the differences kept
    for i in wrong:
        assert xi[i] == pytest.approx(max(losses[i] - float(diffs[i].dot(w)), 0.0), rel=1e-12)
