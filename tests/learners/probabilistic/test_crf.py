"""The CRF (log-loss) learner: its loss against enumeration, its gradient against finite
differences, its optimum against scikit-learn's multinomial logistic regression where the
two problems coincide, its marginals against brute force, and SGD's partial_fit."""

import numpy as np
import pytest
from scipy.special import logsumexp
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression

from latentstruct.exceptions import ConfigError, InputError
from latentstruct.learners import CRF
from latentstruct.tasks import ChunkTask
from latentstruct.tasks.sequence import SequenceCorpus
from latentstruct.testing import all_sequences, sequence_score
from conftest import token_slice


@pytest.fixture
def chunk(tiny_chunk_file):
    # the plain chain (every labelling): the windows below start inside chunks
    task = ChunkTask(constrained=False)
    ds = task.read(tiny_chunk_file)
    task.fit(ds)
    return task, task.featurize(ds), task.encode_targets(ds.targets)


@pytest.fixture
def windows(chunk):
    """Windows of 1..3 tokens, few enough labellings (7**3) to enumerate."""
    task, X, Y = chunk
    out = []
    for i in range(len(X)):
        for length in (1, 2, 3):
            for a in range(0, X[i].n_tokens - length + 1, 3):
                out.append((token_slice(X[i], a, a + length), Y[i][a : a + length]))
    return out


def brute_log_z(task, x, w, keep=None):
    """log Σ_y exp(w·Φ(x, y)) by enumeration (over y agreeing with ``keep``, −1 = free)."""
    parts = task.structure_.part_scores(x, w)
    scores = [sequence_score(y, *parts) for y in all_sequences(x.n_tokens, task.n_labels)
              if keep is None or all(k < 0 or k == v for k, v in zip(keep, y))]
    return logsumexp(scores)


def random_w(task, seed, scale=0.7):
    return np.random.default_rng(seed).normal(scale=scale, size=task.n_features)


def join(xs):
    from latentstruct.tasks.sequence import concat_corpora
    return concat_corpora(xs)


def test_log_loss_matches_enumeration(chunk, windows):
    task, _, _ = chunk
    for k, (x, y) in enumerate(windows[:25]):
        w = random_w(task, k)
        nll, _ = task.structure_.log_loss_batch(x, [y], w)
        gold = sequence_score(y, *task.structure_.part_scores(x, w))
        assert nll == pytest.approx(brute_log_z(task, x, w) - gold, rel=1e-11, abs=1e-11)


def test_partial_labels_sum_over_agreeing_labellings(chunk, windows):
    task, _, _ = chunk
    rng = np.random.default_rng(3)
    checked = 0
    for k, (x, y) in enumerate(windows):
        if x.n_tokens < 2:
            continue
        y = y.copy()
        y[rng.integers(0, y.size)] = -1
        w = random_w(task, 100 + k)
        nll, grad = task.structure_.log_loss_batch(x, [y], w)
        assert nll == pytest.approx(brute_log_z(task, x, w) - brute_log_z(task, x, w, keep=y),
                                    rel=1e-10, abs=1e-10)
        checked += 1
        if checked == 8:
            break
    assert checked == 8


def test_gradient_matches_finite_differences(chunk, windows):
    task, _, _ = chunk
    xs, ys = zip(*windows[:12])
    X = join(list(xs))
    Y = list(ys)
    Y[3] = Y[3].copy()
    Y[3][0] = -1  # a partially labelled example too
    rng = np.random.default_rng(7)
    for seed in range(4):
        w = random_w(task, seed)
        _, grad = task.structure_.log_loss_batch(X, Y, w)
        for _ in range(5):
            d = rng.normal(size=w.size)
            d /= np.linalg.norm(d)
            h = 1e-5
            fp, _ = task.structure_.log_loss_batch(X, Y, w + h * d)
            fm, _ = task.structure_.log_loss_batch(X, Y, w - h * d)
            assert (fp - fm) / (2 * h) == pytest.approx(float(grad @ d), rel=1e-6, abs=1e-7)
        # coordinates the examples touch, one by one
        for j in np.flatnonzero(grad)[:10]:
            e = np.zeros_like(w)
            e[j] = 1e-5
            fp, _ = task.structure_.log_loss_batch(X, Y, w + e)
            fm, _ = task.structure_.log_loss_batch(X, Y, w - e)
            assert (fp - fm) / 2e-5 == pytest.approx(grad[j], rel=1e-5, abs=1e-7)


def test_batch_equals_per_sentence_capability_methods(chunk):
    task, X, Y = chunk
    w = random_w(task, 11, scale=0.3)
    nll, grad = task.structure_.log_loss_batch(X, Y, w)
    ref_nll, ref_grad = 0.0, np.zeros_like(w)
    for i in range(len(X)):
        phi = task.structure_.joint_feature(X[i], Y[i])
        ref_nll += task.structure_.log_partition(X[i], w) - float(phi.values @ w[phi.indices])
        ref_grad += task.structure_.expected_feature(X[i], w)
        np.add.at(ref_grad, phi.indices, -phi.values)
    assert nll == pytest.approx(ref_nll, rel=1e-12)
    np.testing.assert_allclose(grad, ref_grad, atol=1e-10)
    # a corpus view whose offsets do not start at 0
    sub = SequenceCorpus(X.attr_indptr, X.attr_ids, X.offsets[1:])
    assert sub.offsets[0] > 0 and len(sub) == 2
    nll_sub, _ = task.structure_.log_loss_batch(sub, [Y[1], Y[2]], w)
    parts = [task.structure_.log_loss_batch(X[i], [Y[i]], w)[0] for i in (1, 2)]
    assert nll_sub == pytest.approx(sum(parts), rel=1e-12)


def test_marginals_equal_brute_force_and_rows_sum_to_one(chunk, windows):
    task, X, Y = chunk
    model = CRF(task, max_iter=30).fit(X, Y)
    xs = [x for x, _ in windows[:10]]
    marg = model.predict_marginals(join(xs))
    for x, m in zip(xs, marg):
        parts = task.structure_.part_scores(x, model.coef_)
        ys = list(all_sequences(x.n_tokens, task.n_labels))
        s = np.array([sequence_score(y, *parts) for y in ys])
        p = np.exp(s - logsumexp(s))
        ref = np.zeros((x.n_tokens, task.n_labels))
        for y, pr in zip(ys, p):
            ref[np.arange(x.n_tokens), y] += pr
        np.testing.assert_allclose(m, ref, atol=1e-12)
    full = model.predict_marginals(X)
    assert [m.shape for m in full] == [(X[i].n_tokens, task.n_labels) for i in range(len(X))]
    np.testing.assert_allclose(np.concatenate(full).sum(axis=1), 1.0, atol=1e-12)
    # the most probable labels are what a fitted CRF predicts on its (tiny) training data
    assert np.mean(np.concatenate([m.argmax(1) for m in full]) == np.concatenate(Y)) > 0.9


def test_one_token_crf_is_multinomial_logistic_regression(chunk):
    """With one-token sentences the CRF is L2 multinomial logistic regression over the
    attribute counts plus two constant columns (start and end); scikit-learn's optimum with
    C = 1/(2 c2) and no intercept must give the same probabilities."""
    task, X, Y = chunk
    xs, ys = [], []
    for i in range(len(X)):
        for t in range(X[i].n_tokens):
            xs.append(token_slice(X[i], t, t + 1))
            ys.append(Y[i][t : t + 1])
    Xt = join(xs)
    c2 = 0.5
    model = CRF(task, c2=c2, feature_set="all", max_iter=2000, delta=0.0).fit(Xt, ys)
    A = task.n_attributes
    rows = np.zeros((len(xs), A + 2))
    for i, x in enumerate(xs):
        np.add.at(rows[i], x.attr_ids, 1.0)
    rows[:, A:] = 1.0
    labels = np.concatenate(ys)
    lr = LogisticRegression(C=1.0 / (2 * c2), fit_intercept=False, tol=1e-12, max_iter=10000)
    lr.fit(rows, labels)
    ours = np.concatenate(model.predict_marginals(Xt))[:, lr.classes_]
    np.testing.assert_allclose(ours, lr.predict_proba(rows), atol=2e-5)
    # and the transitions, which no one-token sentence uses, stay at zero
    _, trans, _, _ = task.structure_.split_weights(model.coef_)
    np.testing.assert_allclose(trans, 0.0, atol=1e-6)


@pytest.mark.parametrize("features", ["observed", "all"])
def test_lbfgs_reaches_a_stationary_point_and_records_its_run(chunk, features):
    task, X, Y = chunk
    model = CRF(task, c2=0.1, feature_set=features, max_iter=500).fit(X, Y)
    _, grad = task.structure_.log_loss_batch(X, Y, model.coef_)
    grad += 2 * 0.1 * model.coef_
    assert model.converged_ and model.n_iter_ < 500
    trained = np.arange(task.n_features) if model.support_ is None else model.support_
    assert np.abs(grad[trained]).max() < 1e-3
    curve = model.objective_curve_
    assert len(curve) == model.n_iter_ and curve[-1] <= curve[0]
    assert model.objective(X, Y) == pytest.approx(curve[-1], rel=1e-9)
    assert model.score(X, Y) > 0.9


def test_sgd_partial_fit_over_batches_equals_one_pass_over_their_concatenation(chunk):
    task, X, Y = chunk
    n = len(X) - len(X) % 2
    kw = dict(solver="sgd", alpha=0.01, eta0=0.1, batch_size=2, feature_set="all")
    streamed = CRF(task, **kw)
    for a in range(0, n, 2):  # batches of 2: one mini-batch each
        streamed.partial_fit(task.structure_.subset(X, np.arange(a, a + 2)), Y[a : a + 2])
    once = CRF(task, **kw).partial_fit(task.structure_.subset(X, np.arange(n)), Y[:n])
    assert np.abs(streamed.coef_ - once.coef_).max() <= 1e-12
    assert streamed.t_ == once.t_ == n // 2
    assert streamed.n_iter_ == n // 2 and once.n_iter_ == 1
    assert np.abs(streamed.coef_).max() > 0


def test_partial_fit_continues_a_fit_and_checks_its_inputs(chunk):
    task, X, Y = chunk
    model = CRF(task, solver="sgd", max_iter=2, eta0=0.5, batch_size=4).fit(X, Y)
    before, t = model.coef_.copy(), model.t_
    model.partial_fit(X, Y)
    assert model.t_ == t + -(-len(X) // 4) and model.n_iter_ == 3
    assert np.abs(model.coef_ - before).max() > 0
    with pytest.raises(ConfigError, match="solver='sgd'"):
        CRF(task).partial_fit(X, Y)
    with pytest.raises(ConfigError, match="alpha"):
        CRF(task, solver="sgd", eta0=0.1).partial_fit(X, Y)
    with pytest.raises(ConfigError, match="numeric eta0"):
        CRF(task, solver="sgd", alpha=0.1).partial_fit(X, Y)
    with pytest.raises(InputError, match="examples but Y"):
        CRF(task, solver="sgd", alpha=0.1, eta0=0.1).partial_fit(X, Y[:-1])


def test_sgd_fit_is_reproducible_and_learns(chunk):
    task, X, Y = chunk
    a = CRF(task, solver="sgd", max_iter=15, batch_size=2).fit(X, Y)
    b = clone(a).fit(X, Y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.eta0_ in a.eta0_trials_
    assert a.score(X, Y) > 0.8


def test_threads_give_the_serial_model_up_to_summation_order(chunk):
    task, X, Y = chunk
    one = CRF(task, max_iter=20).fit(X, Y)
    two = CRF(task, max_iter=20, n_jobs=2).fit(X, Y)
    np.testing.assert_allclose(one.coef_, two.coef_, atol=1e-8)


def test_thread_blocks_balance_tokens_and_sum_in_order(chunk):
    """n_jobs threads cut the corpus once into blocks of about equal tokens; the summed
    loss and gradient equal the serial pass's (to rounding) and do not depend on the
    threads' timing (the same n_jobs twice: the same bits); OWL-QN (c1 > 0) and a
    process backend (joblib's parallel_config) give the serial model too."""
    from joblib import parallel_config

    from latentstruct.learners.probabilistic.crf import ThreadBlocks

    task, X, Y = chunk
    structure = task.structure()
    with ThreadBlocks.for_fit(structure, X, Y, 3) as blocks:
        sizes = [int(xb.n_tokens) for xb, _ in blocks.parts]
        assert len(sizes) == 3 and sum(sizes) == X.n_tokens
        assert max(sizes) - min(sizes) <= 2 * int(X.lengths().max())
        w = np.random.default_rng(0).normal(size=structure.n_features) * 0.1
        f, g = blocks.loss_grad(w)
        f2, g2 = blocks.loss_grad(w, out=np.empty_like(w))
        assert f == f2 and np.array_equal(g, g2)
    serial_f, serial_g = structure.log_loss_batch(X, Y, w)
    assert f == pytest.approx(serial_f, rel=1e-12)
    np.testing.assert_allclose(g, serial_g, rtol=1e-10, atol=1e-12)
    with ThreadBlocks.for_fit(structure, X, Y, 1) as none:
        assert none is None
    a = CRF(task, c1=0.05, max_iter=15, n_jobs=2).fit(X, Y)
    b = CRF(task, c1=0.05, max_iter=15, n_jobs=2).fit(X, Y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    serial = CRF(task, c1=0.05, max_iter=15).fit(X, Y)
    np.testing.assert_allclose(a.coef_, serial.coef_, atol=1e-8)
    with parallel_config(backend="loky"):
        with ThreadBlocks.for_fit(structure, X, Y, 2) as none:
            assert none is None  # processes: parallel_chunks ships the blocks instead


def test_predict_proba_needs_one_part_per_example(chunk):
    task, X, Y = chunk
    model = CRF(task, max_iter=5).fit(X, Y)
    with pytest.raises(ConfigError, match="predict_marginals"):
        model.predict_proba(X)


def test_model_file_round_trip(chunk, tmp_path):
    from latentstruct.learners.persistence import load_trained, save_trained

    task, X, Y = chunk
    model = CRF(task, solver="sgd", max_iter=3, eta0=0.1).fit(X, Y)
    path = tmp_path / "crf.npz"
    save_trained(path, task, model)
    loaded = load_trained(path)
    learner = loaded[1] if isinstance(loaded, tuple) else loaded
    assert learner.t_ == model.t_ and learner.eta0_ == model.eta0_
    for a, b in zip(learner.predict_marginals(X), model.predict_marginals(X)):
        np.testing.assert_array_equal(a, b)


def test_observed_features_are_crfsuites_set_and_the_rest_stays_zero(chunk):
    task, X, Y = chunk
    model = CRF(task, max_iter=50).fit(X, Y)
    support = model.support_
    L, A = task.n_labels, task.n_attributes
    seen = set()
    for i in range(len(X)):
        x = X[i]
        for t in range(x.n_tokens):
            for a in x.attr_ids[x.attr_indptr[t]:x.attr_indptr[t + 1]]:
                seen.add(int(a) * L + int(Y[i][t]))
    expected = sorted(seen) + list(range(A * L, A * L + L * L))  # no start/end: CRFsuite's
    np.testing.assert_array_equal(support, expected)
    off = np.setdiff1d(np.arange(task.n_features), support)
    assert off.size > 0 and np.all(model.coef_[off] == 0.0)
    assert np.any(model.coef_[support] != 0.0)
    everything = CRF(task, max_iter=50, feature_set="all").fit(X, Y)
    assert everything.support_ is None and np.any(everything.coef_[off] != 0.0)


# --- L-BFGS on the trained weights: the compiled loss of a chain's support ----------------
class WithoutTrainedLoss:
    """The task's structure without ``log_loss_trained``: the CRF's older path, which
    expands the trained weights into a whole weight vector at every evaluation and gathers
    the gradient on the support."""

    def __init__(self, structure):
        self._structure = structure

    def __getattr__(self, name):
        if name == "log_loss_trained":
            raise AttributeError(name)
        return getattr(self._structure, name)


@pytest.fixture(scope="module")
def iob():
    """A sequence task (chunk tags: the chain is constrained to well-formed IOB2) on 80
    random sentences of feature dicts with real values, one gold tag in 15 unknown (−1)."""
    from latentstruct.tasks import SequenceTask

    rng = np.random.default_rng(31)
    kinds = ["NP", "VP", "PP"]
    X_raw, y_raw = [], []
    for _ in range(80):
        tags, prev = [], "O"
        for _ in range(int(rng.integers(1, 12))):
            r = rng.random()
            if prev != "O" and r < 0.35:
                tag = "I-" + prev[2:]
            elif r < 0.85:
                tag = "B-" + kinds[int(rng.integers(0, 3))]
            else:
                tag = "O"
            tags.append(tag)
            prev = tag
        words = [f"{t[-2:]}{int(rng.integers(0, 6))}" for t in tags]
        X_raw.append([{"w": w, "w[-1:]": w[-1:], "bias": 1.0, "x": float(rng.normal()),
                       **({"-1:w": words[i - 1]} if i else {"BOS": True})}
                      for i, w in enumerate(words)])
        y_raw.append(tags)
    task = SequenceTask()
    data = task.make_dataset(X_raw, y_raw)
    task.fit(data)
    assert task.structure_.constraints is not None  # IOB2: constrained
    X, Y = task.featurize(data), [np.asarray(y).copy() for y in task.encode_targets(data.targets)]
    for i in range(0, len(Y), 15):
        Y[i][int(rng.integers(0, Y[i].size))] = -1
    return task, X, Y


@pytest.mark.filterwarnings("ignore:CRF.*stopped at max_iter")
@pytest.mark.parametrize("kw", [
    dict(c2=0.3),
    dict(c2=0.1, possible_states=True),
    dict(c2=0.5, possible_transitions=False),
    dict(c1=0.05, c2=0.1),  # OWL-QN
])
def test_lbfgs_on_the_trained_weights_learns_the_model_of_the_whole_vector(iob, kw):
    """The compiled loss on the trained weights (``log_loss_trained``, in blocks) gives the
    model of the path that expands z into w per evaluation, with one thread or more; and
    every n_jobs gives the same model, bit for bit (the same blocks, summed in order)."""
    task, X, Y = iob
    structure = task.structure()
    models = {}
    for name, struct in (("trained", structure), ("whole", WithoutTrainedLoss(structure))):
        for n_jobs in (1, 2, 3):
            models[name, n_jobs] = CRF(struct, max_iter=40, n_jobs=n_jobs, **kw).fit(X, Y)
    ref = models["whole", 1]
    assert ref.support_ is not None and ref.n_iter_ > 5
    for key, model in models.items():
        np.testing.assert_array_equal(model.support_, ref.support_)
        np.testing.assert_allclose(model.coef_, ref.coef_, rtol=0, atol=1e-9, err_msg=str(key))
        assert model.n_iter_ == ref.n_iter_
        np.testing.assert_allclose(model.objective_curve_, ref.objective_curve_, rtol=1e-12)
    for n_jobs in (2, 3):
        np.testing.assert_array_equal(models["trained", n_jobs].coef_,
                                      models["trained", 1].coef_)
        assert models["trained", n_jobs].objective_curve_ == models["trained", 1].objective_curve_
    off = np.setdiff1d(np.arange(task.n_features), ref.support_)
    assert not models["trained", 2].coef_[off].any()


def test_thread_blocks_on_the_trained_weights(iob):
    """With a support, the blocks cut the prepared trained loss into TRAINED_BLOCKS blocks
    whatever the threads (one thread too), buffers of the support's size, the corpus not
    copied, summed in order: the serial loss and gradient, the same bits for any number
    of threads."""
    from latentstruct.learners.probabilistic.crf import TRAINED_BLOCKS, ThreadBlocks

    task, X, Y = iob
    structure = task.structure()
    support = CRF(task)._support(structure, X, Y)
    loss = structure.log_loss_trained(X, Y, support)
    z = np.random.default_rng(4).normal(scale=0.5, size=support.size)
    serial_f, serial_g = loss(z)
    w = np.zeros(task.n_features)
    w[support] = z
    whole_f, whole_g = structure.log_loss_batch(X, Y, w)
    assert serial_f == whole_f and np.array_equal(serial_g, whole_g[support])
    got = {}
    for n in (1, 2, 3, TRAINED_BLOCKS + 2):
        with ThreadBlocks.for_fit(structure, X, Y, n, support=support) as blocks:
            assert blocks.trained and (blocks.pool is None) == (n == 1)
            assert len(blocks.bounds) == max(TRAINED_BLOCKS, n)
            assert len(blocks.groups) == n
            sizes = [blocks.loss.n_tokens(a, b) for a, b in blocks.bounds]
            assert sum(sizes) == X.n_tokens
            assert max(sizes) - min(sizes) <= 2 * int(X.lengths().max())
            assert all(b.shape == (support.size,) for b in blocks.buffers)
            assert blocks.loss.attr_ids is X.attr_ids
            f, g = blocks.loss_grad(z)
            f2, g2 = blocks.loss_grad(z)
            assert g2 is not g and f == f2 and np.array_equal(g, g2)
            with pytest.raises(ValueError, match="without support"):
                blocks.loss_grad(z, support=support)
        got[n] = f, g
        assert f == pytest.approx(serial_f, rel=1e-12)
        np.testing.assert_allclose(g, serial_g, rtol=0, atol=1e-10)
    for n in (2, 3):
        assert got[n][0] == got[1][0] and np.array_equal(got[n][1], got[1][1])
    with ThreadBlocks.for_fit(WithoutTrainedLoss(structure), X, Y, 2, support=support) as old:
        assert not old.trained and old.buffers[0].shape == (task.n_features,)
        f_old, g_old = old.loss_grad(w, support=support)
    assert f_old == pytest.approx(serial_f, rel=1e-12)
    np.testing.assert_allclose(g_old, serial_g, rtol=0, atol=1e-10)
    with ThreadBlocks.for_fit(WithoutTrainedLoss(structure), X, Y, 1, support=support) as none:
        assert none is None  # one thread on whole vectors: the serial pass itself
