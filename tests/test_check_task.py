"""``latentstruct.testing.check_task``: it fails on deliberately broken tasks (a wrong score,
a wrong loss, a loss-augmented argmax that ignores the loss, a non-maximal latent completion,
a state that does not round-trip) and passes on every registered task, fitted on tiny data
and checked against enumeration where the structure space is tiny."""

import itertools
import threading

import numpy as np

import pytest

from latentstruct.data.sparse import SparseRows, SparseVector

from latentstruct.exceptions import NotFittedError
from latentstruct.inference.result import DecodeResult
from latentstruct.tasks import TASKS, ChainStructure, ChunkTask, Dataset
from latentstruct.tasks.base import StructuredTask
from latentstruct.testing import (
    BagTask,
    TaskCheckReport,
    all_alignments,
    all_sequences,
    check_task,
    make_bag_problem,
)


def bag_examples(n_examples=6, bag_size=3, random_state=0):
    task, X, y = make_bag_problem(n_examples=n_examples, bag_size=bag_size,
                                  random_state=random_state)
    return task, list(zip(X, y))


def bag_enumerate(x):
    return range(len(x))


# ----------------------------------------------------------------------------------------
# a small max-decodable toy task: multiclass with x placed in the block of its class
# ----------------------------------------------------------------------------------------
class Multiclass(StructuredTask):
    """x: a dense vector of length d; y: a class in 0..K-1; Φ(x, y) = x in block y."""

    name = "toy-multiclass"

    def __init__(self, n_classes=3, dim=2):
        self.n_classes = n_classes
        self.dim = dim

    @property
    def n_features(self):
        return self.n_classes * self.dim

    def fit(self, dataset=None):
        self.fitted_ = True
        return self

    def featurize(self, dataset):
        return [np.asarray(r, dtype=np.float64) for r in dataset.records]

    def joint_feature(self, x, y):
        return SparseVector(int(y) * self.dim + np.arange(self.dim), x)

    def class_scores(self, x, w):
        return w.reshape(self.n_classes, self.dim) @ x

    def argmax(self, x, w, y_true=None, *, random_state=None):
        scores = self.class_scores(x, w)
        if y_true is not None:
            scores = scores + (np.arange(self.n_classes) != int(y_true))
        c = int(np.argmax(scores))
        return DecodeResult(c, float(scores[c]))

    def loss(self, y_true, y_pred):
        return float(int(y_true) != int(y_pred))

    def get_state(self):
        return {}, {}

    @classmethod
    def from_state(cls, params, state, arrays):
        return cls(**params).fit()


def multiclass_examples(n=6, seed=0):
    rng = np.random.default_rng(seed)
    task = Multiclass().fit()
    return task, [(rng.normal(size=task.dim), int(rng.integers(task.n_classes))) for _ in range(n)]


def multiclass_enumerate(task):
    return lambda x: range(task.n_classes)


# ----------------------------------------------------------------------------------------
# passing: the toy tasks, the report, misuse
# ----------------------------------------------------------------------------------------
def test_bag_task_passes_with_an_enumerator():
    task, examples = bag_examples()
    report = check_task(task, examples, enumerate=bag_enumerate)
    assert isinstance(report, TaskCheckReport)
    assert report.n_examples == 6 and report.n_weights == 5
    assert {"capabilities-implemented", "fitted", "n-features", "heuristic-weights",
            "heuristic-decode", "latent-argmax-status", "latent-argmax-score",
            "latent-argmax-maximum", "latent-batch", "state-json", "state-round-trip",
            "pickle-round-trip"} <= set(report.checks)
    assert not {"argmax-score", "log-partition"} & set(report.checks)
    assert 0.0 <= report.max_abs_error < 1e-12
    # without an enumerator the maximality check does not run
    assert "latent-argmax-maximum" not in check_task(task, examples, n_weights=2).checks


def test_bag_task_passes_from_a_dataset():
    task, X, y = make_bag_problem(n_examples=4)
    report = check_task(task, Dataset(X, list(y)), enumerate=bag_enumerate, n_weights=3)
    assert report.n_examples == 4 and report.n_weights == 3


def test_a_max_decodable_toy_task_passes_with_an_enumerator():
    task, examples = multiclass_examples()
    report = check_task(task, examples, enumerate=multiclass_enumerate(task))
    assert {"argmax-status", "argmax-score", "argmax-maximum", "loss-gold-zero",
            "loss-nonnegative", "loss-augmented-status", "loss-augmented-score",
            "loss-augmented-not-below-plain", "loss-augmented-not-below-gold",
            "loss-augmented-maximum", "argmax-batch"} <= set(report.checks)
    assert report.max_abs_error < 1e-12


def test_misuse_is_a_clear_error():
    task, examples = bag_examples()
    with pytest.raises(NotFittedError, match="fitted.*task.fit"):
        check_task(BagTask(5), examples)
    assert issubclass(NotFittedError, ValueError)
    with pytest.raises(TypeError, match="Task instance"):
        check_task("bags", examples)
    with pytest.raises(TypeError, match=r"examples\[0\] is a ndarray; expected an \(x, y\) pair"):
        check_task(task, [x for x, _ in examples])
    with pytest.raises(TypeError, match="Dataset .* or a sequence of"):
        check_task(task, 3)
    with pytest.raises(ValueError, match="at least one example"):
        check_task(task, [])
    with pytest.raises(ValueError, match=r"example 1 has target 0; a latent-binary task's "
                                         r"targets are \+1 or -1"):
        check_task(task, [(examples[0][0], 1), (examples[1][0], 0)])
    with pytest.raises(ValueError, match="n_weights must be a positive int"):
        check_task(task, examples, n_weights=0)
    with pytest.raises(TypeError, match="enumerate must be None or a callable"):
        check_task(task, examples, enumerate=[0, 1, 2])
    with pytest.raises(ValueError, match="yielded no structure"):
        check_task(task, examples, enumerate=lambda x: [])
    toy, pairs = multiclass_examples()
    with pytest.raises(ValueError, match="example 0 has no target"):
        check_task(toy, [(pairs[0][0], None)])


def test_a_task_exception_propagates_with_a_note_naming_the_example():
    class Fussy(BagTask):
        def latent_argmax(self, x, w, *, random_state=None):
            if len(x) == 2:
                raise IndexError("no bags of two")
            return super().latent_argmax(x, w)

    task, examples = bag_examples()
    examples.insert(2, (examples[0][0][:2], 1))
    with pytest.raises(IndexError, match="no bags of two") as err:
        check_task(Fussy(5).fit(), examples)
    assert any("raised while checking example 2" in note for note in err.value.__notes__)


# ----------------------------------------------------------------------------------------
# failing: deliberately broken tasks
# ----------------------------------------------------------------------------------------
WHERE = r"check_task: example \d+, weights \d+ \(random_state=0\): "


class BoastingBag(BagTask):
    """The best structure, reported 1 higher than its score."""

    def latent_argmax(self, x, w, *, random_state=None):
        res = super().latent_argmax(x, w)
        return DecodeResult(res.structure, res.score + 1.0)


class WorstBag(BagTask):
    """The worst vector of the bag, with its true score: consistent, but not a maximum."""

    def latent_argmax(self, x, w, *, random_state=None):
        scores = np.asarray(x) @ w
        h = int(np.argmin(scores))
        return DecodeResult(h, float(scores[h]))


def test_a_wrong_latent_score_fails():
    _, examples = bag_examples()
    with pytest.raises(AssertionError, match=WHERE + r"latent_argmax reports score .* but "
                       r"w·latent_feature\(x, h\) = .*\[check 'latent-argmax-score'\]"):
        check_task(BoastingBag(5).fit(), examples)


def test_a_non_maximal_latent_completion_is_caught_only_by_enumeration():
    _, examples = bag_examples(bag_size=4)
    task = WorstBag(5).fit()
    check_task(task, examples)  # every other check holds: the scores are consistent
    with pytest.raises(AssertionError, match=r"check_task: example 0, weights 0 \(random_state=0\): "
                       r"latent_argmax reports score .* but the best of the 4 enumerated "
                       r"structures scores .*the latent completion is not a maximum"
                       r" \[check 'latent-argmax-maximum'\]"):
        check_task(task, examples, enumerate=bag_enumerate)


class WrongScoreMulticlass(Multiclass):
    def argmax(self, x, w, y_true=None, *, random_state=None):
        res = super().argmax(x, w, y_true)
        return res if y_true is not None else DecodeResult(res.structure, res.score - 1.0)


class LossOnGold(Multiclass):
    """loss(y, y) = 1: every structure, the gold one included, counts one error more."""

    def loss(self, y_true, y_pred):
        return 1.0 + super().loss(y_true, y_pred)


class IgnoresLoss(Multiclass):
    """The loss-augmented argmax is the plain one, reported with its plain score."""

    def argmax(self, x, w, y_true=None, *, random_state=None):
        return super().argmax(x, w)


class ReportsButIgnoresLoss(Multiclass):
    """The plain structure, reported with its correct augmented score: consistent, so only
    the enumeration shows that a structure with a loss beats it."""

    def argmax(self, x, w, y_true=None, *, random_state=None):
        res = super().argmax(x, w)
        if y_true is None:
            return res
        return DecodeResult(res.structure, res.score + self.loss(y_true, res.structure))


def test_a_wrong_argmax_score_fails():
    task, examples = multiclass_examples()
    with pytest.raises(AssertionError, match=WHERE + r"argmax reports score .* but "
                       r"w·joint_feature\(x, structure\) = .*; the decoder and joint_feature "
                       r"disagree .*\[check 'argmax-score'\]"):
        check_task(WrongScoreMulticlass().fit(), examples)


def test_a_loss_that_is_not_zero_on_the_gold_structure_fails():
    _, examples = multiclass_examples()
    with pytest.raises(AssertionError, match=r"check_task: example 0: loss\(y, y\) = 1.0, "
                       r"expected 0 .*\[check 'loss-gold-zero'\]"):
        check_task(LossOnGold().fit(), examples)


def test_a_loss_augmented_argmax_that_ignores_the_loss_fails():
    _, examples = multiclass_examples()
    with pytest.raises(AssertionError, match=WHERE + r"the loss-augmented argmax reports score "
                       r".* but w·joint_feature\(x, ŷ\) \+ loss\(y, ŷ\) = .*"
                       r"\[check 'loss-augmented-score'\]"):
        check_task(IgnoresLoss().fit(), examples)


def test_a_consistent_but_non_maximal_loss_augmented_argmax_fails_with_enumeration():
    task, examples = multiclass_examples()
    check_task(ReportsButIgnoresLoss().fit(), examples)  # consistent, never below gold/plain
    with pytest.raises(AssertionError, match=WHERE + r"the loss-augmented argmax reports score "
                       r".* the loss-augmented argmax is not a maximum"
                       r" \[check 'loss-augmented-maximum'\]"):
        check_task(ReportsButIgnoresLoss().fit(), examples, enumerate=multiclass_enumerate(task))


class UnreachableGold(Multiclass):
    """Decodes over classes 0..K-2 only: class K-1 is unreachable, like a non-projective gold
    tree for dep's projective decoder.  The loss-augmented argmax returns the gold structure
    when it wins (as dep does), so it is a maximum over the legal set and the gold one."""

    def argmax(self, x, w, y_true=None, *, random_state=None):
        legal = self.n_classes - 1
        scores = self.class_scores(x, w)[:legal]
        if y_true is not None:
            scores = scores + (np.arange(legal) != int(y_true))
        c = int(np.argmax(scores))
        if self.returns_gold(y_true):
            gold = float(self.class_scores(x, w)[legal])
            if gold > scores[c]:
                return DecodeResult(legal, gold)
        return DecodeResult(c, float(scores[c]))

    def returns_gold(self, y_true):
        return y_true is not None and int(y_true) == self.n_classes - 1


class GoldBlind(UnreachableGold):
    def returns_gold(self, y_true):
        return False


def test_an_unreachable_gold_structure_counts_as_a_loss_augmented_candidate():
    rng = np.random.default_rng(4)
    examples = [(rng.normal(size=2), 2 if k % 2 else int(rng.integers(2))) for k in range(8)]
    legal = lambda x: range(2)  # noqa: E731 - the decoder's legal set, without class 2
    report = check_task(UnreachableGold().fit(), examples, enumerate=legal)
    assert "loss-augmented-maximum" in report.checks
    with pytest.raises(AssertionError, match=WHERE + r"the loss-augmented argmax scores .*, below "
                       r"the gold structure's w·joint_feature\(x, y\) = .*"
                       r"\[check 'loss-augmented-not-below-gold'\]"):
        check_task(GoldBlind().fit(), examples, enumerate=legal)


class ScaledBag(BagTask):
    """Bags scaled by a fitted factor that the state forgets."""

    def fit(self, dataset=None):
        self.scale_ = 2.0
        return super().fit(dataset)

    def latent_argmax(self, x, w, *, random_state=None):
        res = super().latent_argmax(x, w)
        return DecodeResult(res.structure, self.scale_ * res.score)

    def latent_feature(self, x, h):
        return super().latent_feature(x, h).scale(self.scale_)

    @classmethod
    def from_state(cls, params, state, arrays):
        task = cls(**params)
        task.scale_ = 1.0  # forgotten: the default
        task.fitted_ = True
        return task


class ArrayInState(BagTask):
    def get_state(self):
        return {"mean": np.zeros(3)}, {}


class ForgetsFeatures(BagTask):
    @classmethod
    def from_state(cls, params, state, arrays):
        return cls(n_features=params["n_features"] + 1).fit()


class Unpicklable(BagTask):
    def fit(self, dataset=None):
        self.hook_ = threading.Lock()  # no pickler ships a lock (cloudpickle ships lambdas)
        return super().fit(dataset)


def test_a_state_that_does_not_round_trip_fails():
    _, examples = bag_examples()
    with pytest.raises(AssertionError, match=r"check_task: example 0, weights 0 \(random_state=0\): "
                       r"from_state\(get_state\(\)\): latent_feature\(x, h\) differs from the "
                       r"original's .*\[check 'state-round-trip'\]"):
        check_task(ScaledBag(5).fit(), examples)
    with pytest.raises(AssertionError, match=r"check_task: task ForgetsFeatures: "
                       r"from_state\(get_state\(\)\) gave a task with n_features = 6, the "
                       r"original has 5 \[check 'state-round-trip'\]"):
        check_task(ForgetsFeatures(5).fit(), examples)
    with pytest.raises(AssertionError, match=r"not JSON-serialisable .*ndarray.*"
                       r"\[check 'state-json'\]"):
        check_task(ArrayInState(5).fit(), examples)
    with pytest.raises(AssertionError, match=r"does not survive the trip to a process worker"
                       r".*\[check 'pickle-round-trip'\]"):
        check_task(Unpicklable(5).fit(), examples)


def test_a_capability_without_its_methods_fails():
    class Liar(BagTask):
        capabilities = frozenset({"latent-binary", "heuristic", "max-decodable"})

    _, examples = bag_examples()
    with pytest.raises(AssertionError, match=r"check_task: task Liar: declares capabilities "
                       r"whose methods it does not implement \(max-decodable: argmax, "
                       r"joint_feature, loss\).*\[check 'capabilities-implemented'\]"):
        check_task(Liar(5).fit(), examples)


# ----------------------------------------------------------------------------------------
# every registered task, fitted on tiny data
# ----------------------------------------------------------------------------------------
def build_chunk(tmp_path):
    path = tmp_path / "chunk.txt"
    path.write_text("a X B-A\nb Y B-B\n\nb Y B-B\nc Z O\na X B-A\n\nc Z O\n", encoding="utf-8")
    task = ChunkTask(window=1, affix_length=1)
    ds = task.read(path)
    task.fit(ds)
    assert task.n_labels == 3
    return task, ds, lambda x: all_sequences(x.n_tokens, task.n_labels)


def build_pos(tmp_path):
    from latentstruct.tasks import PosTask

    rows = [[("Dogs", "NOUN", 2), ("bark", "VERB", 0)],
            [("Cats", "NOUN", 2), ("sleep", "VERB", 0), ("now", "ADV", 2)],
            [("Run", "VERB", 0)]]
    text = "".join(
        "\n".join(f"{k + 1}\t{w}\t{w.lower()}\t{t}\t_\t_\t{h}\tdep\t_\t_"
                  for k, (w, t, h) in enumerate(sent)) + "\n\n" for sent in rows)
    path = tmp_path / "pos.conllu"
    path.write_text(text, encoding="utf-8")
    task = PosTask()
    ds = task.read(path)
    task.fit(ds)
    assert task.n_labels == 3
    return task, ds, lambda x: all_sequences(x.n_tokens, task.n_labels)


CITATIONS = (
    "<NEWREFERENCE>\n"
    "<author> A. Cau. </author> <title> Formal strategy. </title> <date> 1992. </date>\n"
    "<NEWREFERENCE>\n"
    "<author> Enright. </author> <date> 1978. </date>\n"
    "<NEWREFERENCE>\n"
    "<title> Strategy. </title> <pages> 127-136, </pages> <date> 1990. </date>\n"
)


def build_citations(tmp_path):
    from latentstruct.tasks import CitationTask

    path = tmp_path / "cora.txt"
    path.write_text(CITATIONS, encoding="utf-8")
    task = CitationTask(window=1, affix_length=1)
    ds = task.read(path)
    task.fit(ds)
    small = Dataset(ds.records[1:], ds.targets[1:])  # 2 and 3 tokens: 4**3 labellings at most
    return task, small, lambda x: all_sequences(x.n_tokens, task.n_labels)


def build_dep(tmp_path):
    from latentstruct.data.dependency import DependencySentence, punctuation_mask
    from latentstruct.inference.brute_force import projective_trees
    from latentstruct.tasks.dependency import DependencyTask, DepTarget

    rng = np.random.default_rng(0)
    words, upos, labels = ["the", "dog", "barks", "at"], ["DET", "NOUN", "VERB", "ADP"], \
        ["nsubj", "obj", "root"]

    def sentence(heads):
        n = len(heads)
        return DependencySentence(tuple(rng.choice(words, n)), ("_",) * n,
                                  tuple(rng.choice(upos, n)), ("_",) * n, tuple(heads),
                                  tuple(rng.choice(labels, n)), file_format="conllu")

    def dataset(sents):
        return Dataset(sents, [DepTarget(s.heads, s.deprels, tuple(punctuation_mask(s).tolist()))
                               for s in sents])

    train = [sentence(h) for h in [(0,), (2, 0), (0, 1), (2, 0, 2), (0, 3, 1), (2, 3, 0)]]
    task = DependencyTask(hash_bits=8, label_hash_bits=4).fit(dataset(train))
    # a non-projective gold tree (arcs 3->1 and 4->2 cross), which the decoder cannot reach:
    # the loss-augmented argmax must still never be below it
    check = [sentence((2, 0)), sentence((0, 1, 1)), sentence((3, 4, 0, 3))]

    def enumerate_trees(x):
        n = int(x.lengths()[0])
        label_sets = list(itertools.product(range(task.n_labels), repeat=n)) \
            if task.is_labelled() else [(-1,) * n]
        for heads in projective_trees(n, single_root=task.resolved_single_root()):
            for lab in label_sets:
                yield np.array([heads, lab], dtype=np.int64)

    return task, dataset(check), enumerate_trees


def build_doccls(tmp_path):
    from latentstruct.tasks import DocumentClassificationTask

    texts = ["alpha beta", "beta gamma gamma", "delta eps alpha", "gamma", "eps eps beta",
             "alpha delta"]
    labels = ["c0", "c1", "c2", "c1", "c0", "c2"]
    task = DocumentClassificationTask().fit(Dataset(texts, labels))
    return task, Dataset(texts, labels), lambda x: [np.array([c]) for c in range(task.n_labels)]


GRAMMATICAL_VOCAB = [("the", "DET"), ("dog", "NOUN"), ("cat", "NOUN"), ("saw", "VERB"),
                     ("rose", "VERB"), ("in", "ADP")]


def grammaticality_task(tmp_path, **params):
    from latentstruct.tasks import GrammaticalityTask, PosTask
    from latentstruct.tasks.grammaticality import Sentence

    rng = np.random.default_rng(0)

    def sentence(n):
        idx = rng.integers(0, len(GRAMMATICAL_VOCAB), size=n)
        return Sentence(tuple(GRAMMATICAL_VOCAB[i][0] for i in idx),
                        tuple(GRAMMATICAL_VOCAB[i][1] for i in idx))

    # a POS tagger and a trigram LM: a grammaticality model saves both with its state
    conllu = tmp_path / "tags.conllu"
    conllu.write_text("".join(f"1\t{w}\t{w}\t{t}\t_\t_\t0\troot\t_\t_\n\n"
                              for w, t in GRAMMATICAL_VOCAB), encoding="utf-8")
    pos = PosTask()
    pos.fit(pos.read(conllu))
    lm_corpus = tmp_path / "lm.txt"
    lm_corpus.write_text("the dog saw the cat\nthe cat rose\nthe dog rose in the cat\n",
                         encoding="utf-8")
    task = GrammaticalityTask(min_count=1, lm_corpus=str(lm_corpus), heldout_fraction=0.0,
                              **params)
    task.set_tagger(pos, rng.normal(size=pos.n_features))
    train = [sentence(int(rng.integers(1, 6))) for _ in range(30)]
    task.fit(Dataset(train, np.ones(len(train), dtype=int)))
    check = [sentence(n) for n in (1, 2, 3, 2)]
    return task, Dataset(check, [1, -1, 1, -1]), rng


def build_grammaticality(tmp_path):
    task, ds, rng = grammaticality_task(tmp_path, views="iob2", chunk_types="NP")
    task.set_chunker_weights(rng.normal(size=task.n_features))  # the heuristic weights
    sizes = [v.n_labels for v in task.views_]

    def enumerate_views(x):
        from latentstruct.tasks.sequence.encodings import is_well_formed

        T = x.n_tokens
        per_view = [list(itertools.product(range(L), repeat=T)) for L in sizes]
        for combo in itertools.product(*per_view):
            h = np.array(combo, dtype=np.int64).reshape(len(sizes), T)
            tags = task.structure_.decode_structure(h)
            if all(is_well_formed(tags[v.name], v.name) for v in task.views_):  # constrained
                yield h

    return task, ds, enumerate_views


def graph_pair_task(cls):
    from latentstruct.data.nlp import ParsedSentence

    rng = np.random.default_rng(1)
    lemmas, pos = ("cat", "dog", "run", "the", "big"), ("NOUN", "VERB", "DET", "ADJ")

    def sentence(n):
        tokens = [str(rng.choice(lemmas)) for _ in range(n)]
        tags = tuple(str(rng.choice(pos)) for _ in range(n))
        heads = (-1,) + tuple(int(rng.integers(0, i)) for i in range(1, n))
        return ParsedSentence(" ".join(tokens), tuple(tokens), tuple(tokens), tags, tags,
                              ("",) * n, heads, tuple("ROOT" if h < 0 else "dep" for h in heads),
                              (False,) * n)

    records = [(sentence(int(rng.integers(1, 4))), sentence(int(rng.integers(1, 4))))
               for _ in range(4)]
    labels = np.array([1, -1, 1, -1])
    # use_wordnet=False: hand-made parses and no WordNet, so no spaCy or dictionary is needed
    task = cls(use_wordnet=False, top_k=2).fit(Dataset(records, labels))

    def enumerate_mappings(x):
        from latentstruct.inference.graph_alignment import enumerate_alignments

        for a in enumerate_alignments(x.problem):
            h = np.full(x.n1, -1, dtype=np.int64)
            mp = a.mapped_pairs
            h[mp[:, 0]] = mp[:, 1]
            yield h

    return task, Dataset(records, labels), enumerate_mappings


def build_paraphrase(tmp_path):
    from latentstruct.tasks import ParaphraseTask

    return graph_pair_task(ParaphraseTask)


def build_rte(tmp_path):
    from latentstruct.tasks import RteTask

    return graph_pair_task(RteTask)


def build_rerank(tmp_path):
    from latentstruct.data.dependency.kbest import KBestCandidate, KBestHeader, KBestSentence
    from latentstruct.tasks.rerank import RerankTask, kbest_dataset

    def sentence(words, tags, cands, gold, rels, sid):
        n = len(words)
        return KBestSentence(sid, tuple(words), tuple(w.lower() for w in words), tuple(tags),
                             ("_",) * n, (True,) * n, tuple(gold), tuple(rels),
                             tuple(KBestCandidate(tuple(h), tuple(r), float(s))
                                   for h, r, s in cands), 2)

    sents = [
        sentence(["John", "saw", "Mary"], ["PROPN", "VERB", "PROPN"],
                 [([2, 0, 2], ["nsubj", "root", "obj"], 2.0),
                  ([2, 0, 1], ["nsubj", "root", "dep"], 1.2),
                  ([0, 1, 2], ["root", "dep", "obj"], 0.5)],
                 [2, 0, 2], ["nsubj", "root", "obj"], "a"),
        sentence(["dogs", "bark"], ["NOUN", "VERB"],
                 [([2, 0], ["_", "_"], -1.0), ([0, 1], ["_", "_"], -1.5)],
                 [2, 0], ["nsubj", "root"], "b"),
    ]
    ds = kbest_dataset(KBestHeader("P1", 3, False, True, "gold", "t.conllu"), sents, "l.kbest")
    task = RerankTask(domain="pos", graph="sibling", n_hidden=2, hash_bits=6).fit(ds)

    def enumerate_candidates(x):
        for j in range(x.n_candidates()):
            for h in itertools.product(*map(range, task.structure_.hidden_domain_sizes(x, j))):
                yield j, np.array(h, dtype=np.int64)

    return task, ds, enumerate_candidates


def build_translit(tmp_path):
    from latentstruct.tasks import TransliterationTask

    task = TransliterationTask(bigrams=True).fit(Dataset([("abc", "xy")], [1]))
    ds = Dataset([("ab", "x"), ("ca", "yx"), ("b", "xyx"), ("abc", "xy")], [1, -1, -1, 1])

    def enumerate_alignments(x):
        return all_alignments(x.source_ids(0).shape[0], x.target_ids(0).shape[0])

    return task, ds, enumerate_alignments


def build_hcrf(tmp_path):
    from latentstruct.tasks import TASKS

    task = TASKS["hcrf"](n_states=2, min_count=1, window=0, affix_length=1)
    ds = task.make_dataset([["the", "cat", "sat"], ["Dogs", "bark"], ["a"], ["b", "a", "c", "a"]],
                           [1, -1, 1, -1])
    task.fit(ds)

    def enumerate_classes_and_chains(x):
        for k in range(task.n_classes):
            for h in all_sequences(x.n_tokens, task.n_states):
                if task.structure_.is_legal_chain(h):
                    yield k, np.asarray(h)

    return task, ds, enumerate_classes_and_chains


def build_sequence(tmp_path):
    from latentstruct.tasks import SequenceTask

    path = tmp_path / "crfsuite.txt"  # CRFsuite's data format, with real values
    path.write_text("A\tw\\:a\tn:0.5\nB\tw\\:b\tn:-2\n\nB\tw\\:b\nC\tw\\:c\tn:3.25\n"
                    "A\tw\\:a\n", encoding="utf-8")
    task = SequenceTask()
    ds = task.read(path)
    task.fit(ds)
    assert task.n_labels == 3 and task.featurize(ds).attr_values is not None
    return task, ds, lambda x: all_sequences(x.n_tokens, task.n_labels)


def _graphs():
    # a triangle with a self-loop, a path, a single node, and a graph with a repeated edge
    rng = np.random.default_rng(7)
    edges = [[[0, 1], [1, 2], [2, 0], [1, 1]], [[0, 1], [1, 2]], [], [[0, 1], [1, 0]]]
    return [(rng.normal(size=(max(len(e) and int(np.max(e)) + 1, 1), 2)), e) for e in edges]


def build_graph(tmp_path):
    from latentstruct.tasks import GraphTask

    task = GraphTask()
    X = _graphs()
    ds = task.make_dataset(X, [[0, 2, 1], [1, 0, 0], [2], [0, 1]])
    task.fit(ds)

    def enumerate_labellings(x):
        return [np.array(s) for s in itertools.product(range(3), repeat=x.n_nodes)]

    return task, ds, enumerate_labellings


def build_graph_decision(tmp_path):
    from latentstruct.tasks import GraphDecisionTask

    task = GraphDecisionTask(n_states=2)
    ds = task.make_dataset(_graphs(), [1, -1, 1, -1])
    task.fit(ds)

    def enumerate_labellings(x):
        return [np.array(s) for s in itertools.product(range(2), repeat=x.n_nodes)]

    return task, ds, enumerate_labellings


BUILDERS = {
    "graph": build_graph, "graph-decision": build_graph_decision,
    "chunk": build_chunk, "pos": build_pos, "citations": build_citations, "dep": build_dep,
    "sequence": build_sequence,
    "doccls": build_doccls, "grammaticality": build_grammaticality,
    "paraphrase": build_paraphrase, "rte": build_rte, "rerank": build_rerank,
    "translit": build_translit, "hcrf": build_hcrf,
}

EXPECTED = {
    "max-decodable": {"argmax-score", "argmax-maximum", "loss-augmented-score",
                      "loss-augmented-maximum", "loss-augmented-not-below-gold", "argmax-batch"},
    "latent-binary": {"latent-argmax-score", "latent-argmax-maximum", "latent-batch"},
    "marginalizable": {"log-partition", "log-partition-bound", "log-partition-enumeration",
                       "expected-feature-enumeration"},
    "candidate-list": {"candidate-log-partitions", "candidate-max-product",
                       "candidate-expected-features", "candidate-log-partitions-enumeration",
                       "candidate-max-product-maximum", "candidate-max-product-score"},
    "class-posterior": {"class-log-partitions", "log-loss-batch",
                        "class-log-partitions-enumeration", "log-loss-gradient-enumeration",
                        "class-posterior-batch"},
    "heuristic": {"heuristic-weights", "heuristic-decode"},
    "random-ties": {"random-ties"},
    "sized": {"example-size"},
}


def test_every_registered_task_has_a_builder():
    assert set(BUILDERS) == set(TASKS)


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_every_registered_task_passes(name, tmp_path):
    task, examples, enumerate_structures = BUILDERS[name](tmp_path)
    assert type(task) is TASKS[name]
    report = check_task(task, examples, enumerate=enumerate_structures, n_weights=4)
    assert report.n_examples == len(examples) and report.n_weights == 4
    expected = {"capabilities-implemented", "fitted", "n-features", "state-json",
                "state-round-trip", "pickle-round-trip"}
    for cap in type(task).offered_capabilities(task.get_params()):
        expected |= EXPECTED.get(cap, set())
    assert expected <= set(report.checks), sorted(expected - set(report.checks))
    assert report.max_abs_error < 1e-9


def test_a_corpus_task_checks_the_same_from_pairs_and_from_a_dataset(tmp_path):
    task, ds, enumerate_structures = build_chunk(tmp_path)
    X, Y = task.featurize(ds), task.encode_targets(ds.targets)
    pairs = [(X[i], Y[i]) for i in range(len(X))]
    from_pairs = check_task(task, pairs, enumerate=enumerate_structures, n_weights=2)
    from_dataset = check_task(task, ds, enumerate=enumerate_structures, n_weights=2)
    assert from_pairs.checks == from_dataset.checks and from_pairs.n_examples == 3


class OffByOneChain(ChainStructure):
    def log_partition(self, x, w):
        return super().log_partition(x, w) + 1.0


class OffByOneChunk(ChunkTask):
    """A real task whose log-partition is off by one (module-level classes: they pickle)."""

    structure_class = OffByOneChain


def test_a_wrong_log_partition_of_a_real_task_fails(tmp_path):
    task, ds, enumerate_structures = build_chunk(tmp_path)
    broken = OffByOneChunk(**task.get_params())
    broken.fit(ds)
    check_task(broken, ds, n_weights=2)  # log Z + 1 is still above every score
    with pytest.raises(AssertionError, match=WHERE + r"log_partition = .* but log Σ exp\(w·Φ\) "
                       r"over the \d+ enumerated structures = .*"
                       r"\[check 'log-partition-enumeration'\]"):
        check_task(broken, ds, enumerate=enumerate_structures)


class DroppedRowChain(ChainStructure):
    """Batch Φ differences that lose the last example's emissions, and batch losses off by
    one: what the structural SVM would train on, wrong."""

    def joint_feature_differences(self, X, Y_a, Y_b):
        rows = super().joint_feature_differences(X, Y_a, Y_b)
        return SparseRows.from_vectors([*list(rows)[:-1], SparseVector.empty()])


class OffByOneLossChain(ChainStructure):
    def loss_batch(self, Y_true, Y_pred):
        return super().loss_batch(Y_true, Y_pred) + 1.0


class DroppedRowChunk(ChunkTask):
    structure_class = DroppedRowChain


class OffByOneLossChunk(ChunkTask):
    structure_class = OffByOneLossChain


@pytest.mark.parametrize("cls, pattern", [
    (DroppedRowChunk, r"joint_feature_differences\((X|subset\(X, reversed\)), \.\.\.\) row \d+ "
                      r"differs from "
                      r"joint_feature_difference\(x, y, y_hat\) of example \d+"),
    (OffByOneLossChunk, r"loss_batch\(X\) gives example 0 the loss .* but loss\(y, y_hat\) is"),
])
def test_wrong_batch_differences_or_losses_fail(tmp_path, cls, pattern):
    task, ds, _ = build_chunk(tmp_path)
    broken = cls(**task.get_params())
    broken.fit(ds)
    with pytest.raises(AssertionError, match=pattern + r".*\[check 'argmax-batch'\]"):
        check_task(broken, ds, n_weights=2)


def test_decode_then_vote_skips_only_the_maximality_checks(tmp_path):
    task, ds, _ = grammaticality_task(tmp_path, views="iob1,iob2", combine="vote",
                                      chunker=None)
    assert not task.structure_.argmax_is_maximum()
    report = check_task(task, ds, n_weights=3)
    assert {"latent-argmax-score", "latent-batch", "state-round-trip"} <= set(report.checks)
    assert "heuristic-weights" not in report.checks  # chunker=None offers no heuristic
