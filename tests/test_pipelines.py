"""Training recipes above the learners: the POS tagger (loaded or trained), the supervised
chunker of the grammaticality task (the same weights as the perceptron that used to run
inside the task), when the chunker is trained, and the default grammaticality training on
real sentences."""

import warnings

import numpy as np
import pytest

from latentstruct.pipelines import tagging as pipelines
from latentstruct.data.readers import read_conll2000
from latentstruct.exceptions import ConfigError, ConvergenceWarning, ModelFormatError
from latentstruct.learners import LCLR, LatentPA, LCLRVariant, StructuredSVM, TwoStage
from latentstruct.learners.online.perceptron import StructuredPerceptron
from latentstruct.learners.persistence import save_trained
from latentstruct.tasks import ChunkTask, GrammaticalityTask, PosTask
from latentstruct.tasks.base import Dataset
from latentstruct.tasks.sequence.encodings import convert
from latentstruct.tasks.grammaticality import Sentence
from latentstruct.tasks.sequence.kernels import phi_difference as _joint_feature_difference


# ----------------------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------------------
def small_tagger(sentences):
    """A PosTask + weights trained briefly on (words, tags) pairs."""
    records = [Sentence(tuple(w)) for w, _ in sentences]
    targets = [tuple(t) for _, t in sentences]
    pos = PosTask(min_count=1)
    data = Dataset(records, targets)
    pos.fit(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        svm = StructuredSVM(pos, C=0.1, max_iter=2, random_state=0)
        svm.fit(pos.featurize(data), pos.encode_targets(targets))
    return pos, svm


def old_train_chunker(self) -> np.ndarray:
    """``GrammaticalityTask._train_chunker`` as it was before the chunker moved out of the
    task (copied verbatim, ``self`` being the task, but for the views' members, which are
    the structure's now: ``views``): the reference of the new path."""
    views = self.structure_
    from latentstruct.data.paths import dataset_path
    from latentstruct.exceptions import InputError

    path = self.chunker_corpus or dataset_path("conll2000", "train.txt")
    sents = read_conll2000(path)[: int(self.chunker_sentences)]
    known = set(views.chunk_types_)
    records, gold = [], []
    for s in sents:
        types = {t[2:] for t in s.tags if t != "O"}
        if not types <= known:
            raise InputError(
                f"chunk types {sorted(types - known)} are not among chunk_types "
                f"{sorted(known)}", str(path), s.line)
        records.append(Sentence(s.words))
        gold.append(np.array([[views._label_ids[k][t] for t in convert(s.tags, "iob2", v.name)]
                              for k, v in enumerate(views.views_)], dtype=np.int64))
    X = self._featurize_records(records, self.tag([r.words for r in records]))
    n_w = self.n_features
    w = np.zeros(n_w)
    u = np.zeros(n_w)
    A = len(self.attr_index_)
    rng = np.random.default_rng(self.seed)
    step = 0
    for _ in range(int(self.chunker_epochs)):
        for i in rng.permutation(len(records)):
            step += 1
            x = X[int(i)]
            offsets, decoded = views._decode_views(x, w)
            for k, v in enumerate(views.views_):
                pred, g = decoded[k][4], gold[int(i)][k]
                if np.array_equal(pred, g):
                    continue
                idx, val = _joint_feature_difference(x.attr_indptr, x.attr_ids, None, 0,
                                                     x.n_tokens, g, pred, A, v.n_labels)
                idx = idx + v.offset
                np.add.at(w, idx, val)
                np.add.at(u, idx, (step - 1) * val)
    return w - u / max(step, 1)


@pytest.fixture
def conll_task(require_data):
    """A grammaticality task over every view, fitted on CoNLL-2000 sentences 100-299 and
    tagged by a small tagger trained on the PTB tags of sentences 0-299 (no LM needed)."""
    conll = require_data("conll2000", "train.txt")
    sents = read_conll2000(conll)[:300]
    pos, svm = small_tagger([(s.words, s.pos) for s in sents])

    def make(**params):
        task = GrammaticalityTask(views="iob1,iob2,ioe1,ioe2,oc", chunker_corpus=str(conll),
                                  min_count=1, **params)
        task.set_tagger(pos, svm.coef_)
        records = [Sentence(s.words) for s in sents[100:]]
        return task.fit(Dataset(records, np.ones(len(records), dtype=int)))

    return make


# ----------------------------------------------------------------------------------------
# the supervised chunker
# ----------------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.data
@pytest.mark.parametrize("seed, epochs", [(0, 3), (5, 2)])
def test_train_chunker_gives_the_weights_of_the_old_in_task_perceptron(conll_task, seed, epochs):
    """The old code decoded every view, updated only the wrong ones, each in its own block;
    the new one updates with Phi(x, y) - Phi(x, y_hat) over all views whenever one is wrong.
    The views' blocks are disjoint and a right view's difference is zero, so the updates
    are the same, and both draw one ``default_rng(seed).permutation(n)`` per epoch: the
    weights agree.  (The learner stops after a mistake-free epoch, which the old code did
    not; no epoch is mistake-free here, as asserted.)"""
    task = conll_task(chunker_sentences=100, chunker_epochs=epochs, seed=seed)
    reference = old_train_chunker(task)
    assert not task.heuristic_ready()
    new = pipelines.train_chunker(task)
    np.testing.assert_allclose(new, reference, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(task.structure_.heuristic_weights(), new)
    assert np.any(new != 0) and new[-1] == 0.0
    # no early stop happened, so the comparison covers every epoch
    X, Y = task.chunk_training_data()
    m = StructuredPerceptron(task.chunking_task(), max_iter=epochs, random_state=seed).fit(X, Y)
    assert m.n_iter_ == epochs and all(v > 0 for v in m.objective_curve_)
    assert m.objective_curve_[-1] < m.objective_curve_[0]


def test_train_chunker_needs_a_grammaticality_task(tiny_chunk_file):
    task = ChunkTask()
    task.fit(task.read(tiny_chunk_file))
    with pytest.raises(ConfigError, match="no supervised chunker"):
        pipelines.train_chunker(task)


def test_which_learners_need_the_chunker():
    need = pipelines.learner_needs_heuristic
    assert need(LCLR()) and need(LCLRVariant()) and need(TwoStage())
    assert need(LatentPA(init="heuristic"))
    assert not need(LCLR(init="zeros")) and not need(LCLRVariant(init="zeros"))
    assert not need(LCLR(coef_init=np.zeros(3))) and not need(LatentPA(init="heuristic",
                                                                       coef_init=np.zeros(3)))
    assert not need(LatentPA()) and not need(StructuredSVM()) and not need(StructuredPerceptron())
    auto, always, never = (GrammaticalityTask(), GrammaticalityTask(chunker="perceptron"),
                           GrammaticalityTask(chunker=None))
    assert auto.chunker == "auto"
    assert pipelines.needs_chunker(auto, LCLR()) and not pipelines.needs_chunker(auto, LatentPA())
    assert pipelines.needs_chunker(always, LatentPA())
    assert not pipelines.needs_chunker(never, LCLR())
    assert not pipelines.needs_chunker(ChunkTask(), LCLR())


def test_attach_chunker_trains_only_when_needed(monkeypatch):
    calls = []

    class Fitted(GrammaticalityTask):
        def heuristic_ready(self):
            return bool(calls)

    monkeypatch.setattr(pipelines, "train_chunker",
                        lambda task, verbose=False: calls.append(task) or np.ones(2))
    task = Fitted()
    assert pipelines.attach_chunker(task, LatentPA()) is None and not calls
    assert pipelines.attach_chunker(task, LCLRVariant()) is not None and calls == [task]
    assert pipelines.attach_chunker(task, LCLRVariant()) is None and len(calls) == 1
    assert pipelines.attach_chunker(Fitted(chunker=None), TwoStage()) is None and len(calls) == 1


# ----------------------------------------------------------------------------------------
# the POS tagger
# ----------------------------------------------------------------------------------------
def test_attach_tagger_loads_the_model_file_or_trains_the_default(tmp_path, monkeypatch):
    pos, svm = small_tagger([(("the", "dog", "ran"), ("DET", "NOUN", "VERB")),
                             (("a", "cat", "sat"), ("DET", "NOUN", "VERB"))])
    path = tmp_path / "pos.npz"
    save_trained(path, pos, svm)
    task = GrammaticalityTask(tagger_model=str(path))
    assert not task.needs_tagger and not task.has_tagger()
    got = pipelines.attach_tagger(task)
    assert task.has_tagger() and isinstance(got[0], PosTask)
    np.testing.assert_array_equal(got[1], svm.coef_)
    assert task.tag([("the", "cat", "ran")]) == [("DET", "NOUN", "VERB")]
    assert pipelines.attach_tagger(task) is None  # already attached
    assert pipelines.attach_tagger(ChunkTask()) is None  # a task without a tagger

    calls = []

    def fake(n, verbose=False):
        calls.append((n, verbose))
        return pos, svm.coef_, None

    monkeypatch.setattr(pipelines, "train_pos_tagger", fake)
    default = GrammaticalityTask(tagger_sentences=7)
    assert default.needs_tagger
    pipelines.attach_tagger(default, verbose=True)
    assert calls == [(7, True)] and default.has_tagger()
    with pytest.raises(ConfigError, match="tagger_sentences"):
        pipelines.attach_tagger(GrammaticalityTask(tagger_sentences=0))


def test_attach_tagger_bad_files(tmp_path, tiny_chunk_file):
    with pytest.raises(ModelFormatError, match=r"tagger_model=.*missing.npz.*no such file"):
        pipelines.attach_tagger(GrammaticalityTask(tagger_model=str(tmp_path / "missing.npz")))
    chunk = ChunkTask()
    chunk.fit(chunk.read(tiny_chunk_file))
    ds = chunk.read(tiny_chunk_file)
    m = StructuredPerceptron(chunk, max_iter=2).fit(chunk.featurize(ds),
                                                    chunk.encode_targets(ds.targets))
    path = tmp_path / "chunk.npz"
    save_trained(path, chunk, m)
    with pytest.raises(ModelFormatError, match=r"'chunk' model, expected 'pos'"):
        pipelines.attach_tagger(GrammaticalityTask(tagger_model=str(path)))
    text = tmp_path / "notes.txt"
    text.write_text("not a model\n", encoding="utf-8")
    with pytest.raises(ModelFormatError, match="tagger_model"):
        pipelines.attach_tagger(GrammaticalityTask(tagger_model=str(text)))
    with pytest.raises(ConfigError, match="path of a pos model file"):
        pipelines.attach_tagger(GrammaticalityTask(tagger_model=3))


# ----------------------------------------------------------------------------------------
# defaults work: `latentstruct train grammaticality --learner lclr-variant` with no options
# ----------------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.data
def test_default_grammaticality_training_with_two_stage_init(require_data):
    """What `latentstruct train grammaticality --train SENTENCES --learner lclr-variant
    --option n_train=...` does, with only sizes reduced: the default tagger is trained, the
    default LM and chunker corpus are used, and chunker="auto" trains the chunker because
    the learners' default init is two-stage.  Both models beat chance on held-out data.

    Iterations: LCLR-variant re-decodes the negatives once per outer iteration, and with 2
    iterations at this size it still scores every sentence positive (accuracy 0.5), so it
    runs 20; LCLR runs 2 outer iterations with at most 10 cutting-plane rounds each (its
    default 50 rounds take minutes here)."""
    require_data("ud_english_ewt", "en_ewt-ud-train.conllu")
    require_data("conll2000", "train.txt")
    sentences = require_data("english_sentences", "reuters21578_sentences.txt")
    task = GrammaticalityTask(n_train=300, tagger_sentences=200, chunker_sentences=200,
                              n_test=300, n_negative_sets=1)
    assert task.chunker == "auto" and task.test_sentences == "auto"
    pipelines.attach_tagger(task)
    train = task.read(sentences, split="train")
    task.fit(train)
    X, y = task.featurize(train), task.encode_targets(train.targets)
    test = task.read(sentences, split="test")  # the training file: its held-out share
    assert all(task.is_heldout(r.words) for r, t in zip(test.records, test.targets) if t > 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        variant = LCLRVariant(task, max_iter=20)
        assert pipelines.attach_chunker(task, variant) is not None  # "auto": two-stage init
        assert task.heuristic_ready()
        variant.fit(X, y)
        lclr = LCLR(task, max_iter=2, max_cutting_plane_rounds=10)
        assert pipelines.attach_chunker(task, lclr) is None  # already trained
        lclr.fit(X, y)
    for model in (variant, lclr):
        metrics = task.evaluate_model(test, model.predict, model.decision_function)
        assert metrics["n_positives"] == 300
        assert metrics["accuracy"] > 0.55, (type(model).__name__, metrics)
