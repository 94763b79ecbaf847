"""LatentPA's compiled pass over chunking views (issue 55, item 1).

The grammaticality structure runs a whole LatentPA epoch in one compiled call
(``ViewsStructure.latent_pa_pass``, :mod:`latentstruct.tasks.grammaticality.online_kernels`)
with the PA step of ``solvers.online_rules.pa_tau``.  Here every variant, with and without
averaging, is trained twice on the same data, once compiled and once through the learner's
Python loop (the structure's batch withheld), and must give the same weights (to 1e-9), the
same curves and the same counters; so must ``partial_fit``, a run resumed from a checkpoint
(written by either path), and the inference checks (a decoder whose score is not
``w . Phi`` is caught, counted or raised on, the same way).  A per-step callback, the
decode-then-vote and a subclass with its own decoder keep the Python loop.
"""

import re
import warnings

import numpy as np
import pytest

from latentstruct.data.sparse import SparseVector
from latentstruct.exceptions import InexactInferenceWarning, InferenceError
from latentstruct.learners import LatentPA
from latentstruct.learners.checkpoint import Checkpoint, read_checkpoint
from latentstruct.tasks import GrammaticalityTask
from latentstruct.tasks.base import Dataset
from latentstruct.tasks.grammaticality import Sentence
from latentstruct.tasks.grammaticality.decoding import ViewsStructure
from latentstruct.tasks.grammaticality.online_kernels import _features
from latentstruct.tasks.grammaticality.views import ViewLayout
from latentstruct.tasks.sequence.corpus import SequenceCorpus

VOCAB = [("the", "DET"), ("a", "DET"), ("dog", "NOUN"), ("cat", "NOUN"), ("market", "NOUN"),
         ("saw", "VERB"), ("rose", "VERB"), ("sharply", "ADV"), ("in", "ADP"), (".", "PUNCT")]
VARIANTS = [("pa", 1.0), ("pa-i", 0.02), ("pa-ii", 0.3)]


def random_problem(seed, n=40, **params):
    """A grammaticality task fitted on random pre-tagged sentences (no tagger, no LM) and
    its featurised sentences with random labels."""
    rng = np.random.default_rng(seed)
    records = []
    for _ in range(n):
        idx = rng.integers(0, len(VOCAB), size=int(rng.integers(1, 9)))
        records.append(Sentence(tuple(VOCAB[i][0] for i in idx), tuple(VOCAB[i][1] for i in idx)))
    y = np.where(rng.random(n) < 0.5, 1, -1)
    task = GrammaticalityTask(min_count=1, **params)
    data = Dataset(records, y)
    task.fit(data)
    return task, task.featurize(data), y


@pytest.fixture(scope="module", params=["iob2", "iob1,oc", "ioe2-free"])
def problem(request):
    if request.param == "ioe2-free":
        return random_problem(3, views="ioe2", constrained=False)
    return random_problem(len(request.param), views=request.param)


def quiet(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


def python_loop(learner):
    """``learner`` with its structure's compiled pass withheld (the Python loop runs)."""
    learner._latent_batch = lambda structure, X, y, known: None
    return learner


def compiled(learner):
    """``learner``, failing the test unless its passes run compiled."""
    prepare = learner._latent_batch

    def checked(structure, X, y, known):
        batch = prepare(structure, X, y, known)
        assert batch is not None, "the compiled pass was not taken"
        return batch

    learner._latent_batch = checked
    return learner


COUNTERS = ("n_iter_", "n_passes_", "n_steps_", "t_", "n_updates_", "n_negative_cap_hits_",
            "converged_", "n_inexact_decodes_")


def same_model(a, b):
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(a._online.w, b._online.w, rtol=1e-9, atol=1e-9)
    assert a.accuracy_curve_ == b.accuracy_curve_
    np.testing.assert_allclose(a.loss_curve_, b.loss_curve_, rtol=1e-9, atol=1e-12)
    for name in COUNTERS:
        assert getattr(a, name) == getattr(b, name), name
    assert a.n_updates_ > 0


@pytest.mark.parametrize("average", [False, True], ids=["last", "averaged"])
@pytest.mark.parametrize("variant,C", VARIANTS)
def test_compiled_epoch_equals_the_python_loop(problem, variant, C, average):
    task, X, y = problem
    params = dict(variant=variant, C=C, average=average, max_iter=5, random_state=2)
    fast = quiet(lambda: compiled(LatentPA(task, **params)).fit(X, y))
    slow = quiet(lambda: python_loop(LatentPA(task, **params)).fit(X, y))
    same_model(fast, slow)


@pytest.mark.parametrize("variant,C", VARIANTS)
def test_capped_negatives_and_unshuffled_order(problem, variant, C):
    """max_negative_updates=1 stops every unsettled negative at its first round (each is
    counted); shuffle=False visits in the given order."""
    task, X, y = problem
    params = dict(variant=variant, C=C, max_iter=3, max_negative_updates=1, shuffle=False,
                  average=True)
    fast = quiet(lambda: compiled(LatentPA(task, **params)).fit(X, y))
    slow = quiet(lambda: python_loop(LatentPA(task, **params)).fit(X, y))
    same_model(fast, slow)
    assert fast.n_negative_cap_hits_ > 0


def test_convergence_stops_both_paths_at_the_same_epoch():
    task, X, y = random_problem(11, n=12)
    params = dict(max_iter=200, random_state=0)
    fast = quiet(lambda: compiled(LatentPA(task, **params)).fit(X, y))
    slow = quiet(lambda: python_loop(LatentPA(task, **params)).fit(X, y))
    same_model(fast, slow)
    assert fast.converged_ and fast.n_iter_ < 200


def test_real_sentences(require_data):
    """CoNLL-2000 sentences with their POS tags (+1) against their own words shuffled (-1)."""
    path = require_data("conll2000", "train.txt")
    sentences, words, tags = [], [], []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                w, p, _ = line.split()
                words.append(w)
                tags.append(p)
            elif words:
                sentences.append(Sentence(tuple(words), tuple(tags)))
                words, tags = [], []
                if len(sentences) == 60:
                    break
    rng = np.random.default_rng(0)
    negatives = []
    for s in sentences:
        perm = rng.permutation(len(s.words))
        negatives.append(Sentence(tuple(s.words[i] for i in perm), tuple(s.pos[i] for i in perm)))
    data = Dataset(sentences + negatives, np.array([1] * 60 + [-1] * 60))
    task = GrammaticalityTask(min_count=1, views="iob2,ioe1")
    task.fit(data)
    X, y = task.featurize(data), data.targets
    for variant, C in VARIANTS:
        params = dict(variant=variant, C=C, average=True, max_iter=3, random_state=0)
        fast = quiet(lambda: compiled(LatentPA(task, **params)).fit(X, y))
        slow = quiet(lambda: python_loop(LatentPA(task, **params)).fit(X, y))
        same_model(fast, slow)


@pytest.mark.parametrize("variant,C", VARIANTS)
def test_partial_fit_equals_the_python_loop(problem, variant, C):
    task, X, y = problem
    fast = compiled(LatentPA(task, variant=variant, C=C, average=True, random_state=4))
    slow = python_loop(LatentPA(task, variant=variant, C=C, average=True, random_state=4))
    for a, b in ((0, 15), (15, 40), (0, 40)):
        quiet(lambda: fast.partial_fit(X[a:b], y[a:b]))
        quiet(lambda: slow.partial_fit(X[a:b], y[a:b]))
        same_model(fast, slow)


class Interrupt(Exception):
    pass


def interrupted(make, X, y, path, after):
    def stop(it, _):
        if it == after:
            raise Interrupt

    with pytest.raises(Interrupt):
        quiet(lambda: make().fit(X, y, checkpoint=Checkpoint(path, on_save=stop)))
    return path


def test_checkpoints_resume_across_the_two_paths(tmp_path):
    """A run resumed from a checkpoint is the uninterrupted run, whichever path wrote the
    checkpoint and whichever resumes it (a callback, which may change on resume, forces
    the Python loop); the structures the checkpoint remembers are the same."""
    task, X, y = random_problem(5, views="iob2,oc")
    steps = []

    def watch(event):
        steps.append(event.kind)

    def make(callback=None):
        return LatentPA(task, max_iter=5, average=True, random_state=3, callback=callback)

    plain = quiet(lambda: compiled(make()).fit(X, y))
    by_loop = quiet(lambda: make(watch).fit(X, y))
    same_model(plain, by_loop)
    assert "step" in steps

    fast_ck = interrupted(lambda: compiled(make()), X, y, tmp_path / "fast.npz", 2)
    slow_ck = interrupted(lambda: make(watch), X, y, tmp_path / "slow.npz", 2)
    known, monitors = [], []
    for ck in (fast_ck, slow_ck):
        meta, arrays = read_checkpoint(ck)
        monitors.append(meta["state"]["monitor"])  # the decodes counted, the checks' failures
        ptr = arrays["state.last_phi.ptr"]
        rows = zip(np.split(arrays["state.last_phi.indices"], ptr[1:-1]),
                   np.split(arrays["state.last_phi.values"], ptr[1:-1]), strict=True)
        known.append(dict(zip(meta["state"]["last_phi_ids"], rows, strict=True)))
    assert monitors[0] == monitors[1] and monitors[0]["n_decodes"] >= 2 * len(y)
    assert known[0].keys() == known[1].keys() == set(range(len(y)))
    for i, (idx, val) in known[0].items():
        np.testing.assert_array_equal(idx, known[1][i][0])
        np.testing.assert_array_equal(val, known[1][i][1])
    for ck in (fast_ck, slow_ck):
        same_model(plain, quiet(lambda: compiled(make()).fit(X, y, resume=ck)))
        same_model(plain, quiet(lambda: make(watch).fit(X, y, resume=ck)))


def test_known_structures_round_trip_through_the_batch():
    task, X, y = random_problem(8)
    structure = task.structure_
    learner = compiled(LatentPA(task, max_iter=1, random_state=0))
    quiet(lambda: learner.fit(X, y))
    batch = structure.latent_pa_batch(X, y)
    w = learner.coef_.copy()
    structure.latent_pa_pass(batch, w, np.zeros(0), np.arange(len(y)), 0, 1.0, 20, 0, True,
                             1e-6)
    known = structure.latent_pa_known(batch)
    assert sorted(known) == list(range(len(y)))
    again = structure.latent_pa_known(structure.latent_pa_batch(X, y, known))
    for i, phi in known.items():
        assert isinstance(phi, SparseVector)
        np.testing.assert_array_equal(again[i].indices, phi.indices)
        np.testing.assert_array_equal(again[i].values, phi.values)


# ----------------------------------------------------------------------------------------
# the Python loop stays where the compiled pass would not do what it does
# ----------------------------------------------------------------------------------------
class OwnDecoder(ViewsStructure):
    """A subclass whose decoder is its own (here: the parent's, through an override)."""

    def latent_argmax(self, x, w, *, random_state=None):
        return super().latent_argmax(x, w, random_state=random_state)


def test_fallbacks_keep_the_python_loop():
    task, X, y = random_problem(9)
    base = task.structure_
    own = OwnDecoder(base.views_, base.chunk_types_, base.n_attributes)
    assert base.latent_pa_batch(X, y) is not None
    assert own.latent_pa_batch(X, y) is None
    vote = ViewsStructure(base.views_, base.chunk_types_, base.n_attributes, "vote")
    assert vote.latent_pa_batch(X, y) is None
    # the learner trains the subclass by its Python loop, to the same model
    a = quiet(lambda: LatentPA(own, max_iter=3, random_state=0).fit(X, y))
    b = quiet(lambda: compiled(LatentPA(base, max_iter=3, random_state=0)).fit(X, y))
    same_model(a, b)
    # a per-step callback is called at every step: the Python loop runs
    learner = LatentPA(task, max_iter=2, callback=lambda event: None)
    assert learner._latent_batch(task.structure(), X, y, None) is None


# ----------------------------------------------------------------------------------------
# a learner never trusts a decoder blindly
# ----------------------------------------------------------------------------------------
def lying_structure(structure, bonus=5.0):
    """The views with every allowed transition scoring ``bonus`` more in the decoder than in
    Phi: the decoder's score is not w . Phi(x, h), and its argmax not the maximum."""
    views = [ViewLayout(v.name, v.labels, v.offset, v.trans_mask + bonus, v.start_mask,
                        v.end_mask) for v in structure.views_]
    return ViewsStructure(views, structure.chunk_types_, structure.n_attributes)


def test_inconsistent_decodes_are_caught_the_same_way():
    task, X, y = random_problem(12, views="iob2,oc")
    lying = lying_structure(task.structure_)
    assert lying.latent_pa_batch(X, y) is not None
    with pytest.raises(InferenceError, match="reports the score") as fast:
        compiled(LatentPA(lying, max_iter=2)).fit(X, y)
    with pytest.raises(InferenceError, match="reports the score") as slow:
        python_loop(LatentPA(lying, max_iter=2)).fit(X, y)
    assert str(fast.value) == str(slow.value)
    messages = []
    for make in (compiled, python_loop):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            make(LatentPA(lying, max_iter=3, check_inference=False, random_state=1)).fit(X, y)
        found = [str(w.message) for w in caught if issubclass(w.category, InexactInferenceWarning)]
        assert len(found) == 1
        messages.append(found[0])
    assert messages[0] == messages[1]
    assert int(re.search(r"(\d+) decodes were inconsistent", messages[0]).group(1)) > 0


# ----------------------------------------------------------------------------------------
# valued attributes (a corpus built by hand: the task's featurizer gives binary ones)
# ----------------------------------------------------------------------------------------
def valued_problem(seed, n=30, n_attr=7, views=("iob2", "oc")):
    """Sentences whose tokens repeat attributes with real values, some of them cancelling
    (value +v at one token, -v at another), over a ViewsStructure of ``views``."""
    rng = np.random.default_rng(seed)
    indptr, ids, values, offsets = [0], [], [], [0]
    for _ in range(n):
        T = int(rng.integers(0, 7)) if rng.random() < 0.9 else 0
        for _ in range(T):
            k = int(rng.integers(1, 5))
            ids.extend(rng.integers(0, n_attr, size=k).tolist())
            values.extend(rng.choice([-1.5, -1.0, 0.5, 1.0, 2.0], size=k).tolist())
            indptr.append(len(ids))
        offsets.append(offsets[-1] + T)
    X = SequenceCorpus(np.array(indptr), np.array(ids, dtype=np.int64), np.array(offsets),
                       np.array(values))
    structure = ViewsStructure.build(list(views), ["NP", "VP"], True, n_attr)
    return structure, X, np.where(rng.random(n) < 0.5, 1, -1)


@pytest.mark.parametrize("seed", range(4))
def test_compiled_features_are_the_feature_map(seed):
    """The kernel's Phi(x, h) is ``latent_feature``'s, bit for bit (same indices, values
    summed in the same order, zero sums dropped), with valued and repeated attributes."""
    structure, X, _ = valued_problem(seed)
    batch = structure.latent_pa_batch(X, np.ones(len(X)))
    rng = np.random.default_rng(seed)
    for i in range(len(X)):
        t0, t1 = int(X.offsets[i]), int(X.offsets[i + 1])
        h = np.stack([rng.integers(0, v.n_labels, size=t1 - t0) for v in structure.views_])
        idx, val = _features(X.attr_indptr, X.attr_ids, X.attr_values, batch.by_attr, t0, t1,
                             np.ascontiguousarray(h), batch.view_offsets, batch.view_labels,
                             structure.n_attributes, structure.n_features - 1)
        phi = structure.latent_feature(X[i], h)
        np.testing.assert_array_equal(idx, phi.indices)
        np.testing.assert_array_equal(val, phi.values)


@pytest.mark.parametrize("variant,C", VARIANTS)
def test_valued_attributes_train_the_same_model(variant, C):
    structure, X, y = valued_problem(7, n=40)
    params = dict(variant=variant, C=C, average=True, max_iter=4, random_state=5)
    fast = quiet(lambda: compiled(LatentPA(structure, **params)).fit(X, y))
    slow = quiet(lambda: python_loop(LatentPA(structure, **params)).fit(X, y))
    same_model(fast, slow)
