"""The dependency featurizer (``DependencyFeaturizer``) on its own and as the parser's
``featurizer_``: the same codes as the task, the state a model file holds (one written
before the featurizer loads unchanged), target encoding, the tagger it holds, and the
task's structure (at most two parent classes, clones that do not share a new tagger)."""

import numpy as np
import pytest
from sklearn.base import clone

from latentstruct.data.dependency import DependencySentence
from latentstruct.exceptions import ConfigError, InputError, NotFittedError
from latentstruct.tasks.base import ComposedTask, Dataset
from latentstruct.tasks.dependency import DependencyFeaturizer, DependencyTask, DepTarget
from latentstruct.tasks.dependency.corpus import token_codes
from latentstruct.tasks.dependency.decoding import DependencyStructure
from latentstruct.tasks.sequence.pos import PosTask
from latentstruct.tasks.validation import UnseenLabelError


def _ud(words, upos, heads, deprels):
    n = len(words)
    return DependencySentence(tuple(words), ("_",) * n, tuple(upos), ("_",) * n, tuple(heads),
                              tuple(deprels), file_format="conllu")


SENTS = [_ud(["Dogs", "bark", "."], ["NOUN", "VERB", "PUNCT"], [2, 0, 2],
             ["nsubj", "root", "punct"]),
         _ud(["Cats", "see", "dogs"], ["NOUN", "VERB", "NOUN"], [2, 0, 2],
             ["nsubj", "root", "obj"])]


def _dataset(records):
    return Dataset(records, [DepTarget(r.heads, r.deprels, (True,) * len(r)) for r in records])


def test_transform_gives_the_codes_of_the_words_prefixes_and_pos():
    f = DependencyFeaturizer().fit(SENTS)
    assert (f.data_format_, f.pos_column_, f.labelled_) == ("conllu", "upos", True)
    assert f.labels_ == ["nsubj", "obj", "punct", "root"]
    assert (f.input_kind_, f.n_columns_) == ("tokens", 0)
    X = f.transform(SENTS)
    assert X.offsets.tolist() == [0, 4, 8]
    word, prefix, pos = token_codes(SENTS[1].words, SENTS[1].upos)
    assert np.array_equal(X.word[4:8], word) and np.array_equal(X.pos[4:8], pos)
    assert np.array_equal(X.prefix[4:8], prefix)
    assert X.scored.tolist() == [0, 1, 1, 0, 0, 1, 1, 1]  # ROOT and "." are not scored


def test_the_parser_delegates_to_its_featurizer():
    task = DependencyTask(hash_bits=8, label_hash_bits=4).fit(_dataset(SENTS))
    alone = DependencyFeaturizer().fit(SENTS)
    a, b = task.featurize(_dataset(SENTS)), alone.transform(SENTS)
    assert all(np.array_equal(getattr(a, k), getattr(b, k))
               for k in ("word", "prefix", "pos", "scored", "offsets"))
    assert task.labels_ == task.featurizer_.labels_ == alone.labels_
    assert task.pos_column_ == "upos" and task.featurizer_.get_params()["pos"] == "gold"
    Y = task.encode_targets(_dataset(SENTS).targets)
    assert [y.tolist() for y in Y] == [y.tolist() for y in alone.encode_targets(
        _dataset(SENTS).targets)]
    assert Y[1][1].tolist() == [0, 3, 1]  # nsubj, root, obj


def test_declared_classes_join_the_labels_and_unseen_ones_are_refused():
    f = DependencyFeaturizer(classes=["amod"]).fit(SENTS)
    assert f.labels_ == ["amod", "nsubj", "obj", "punct", "root"]
    gold = [DepTarget((2, 0), ("nsubj", "iobj"), (True, True))]
    with pytest.raises(UnseenLabelError, match=r"'iobj' at sentence 0, word 2"):
        f.encode_targets(gold)
    assert f.encode_targets(gold, unseen_ok=True)[0][1].tolist() == [1, -1]
    back = f.decode_targets(f.encode_targets(gold, unseen_ok=True))
    assert back[0].deprels == ("nsubj", "_") and back[0].heads == (2, 0)


def test_unlabelled_and_dp_sentences():
    dp = [DependencySentence(("A", "dog"), ("_", "_"), ("_", "_"), ("DT", "NN"), (2, 0),
                             ("_", "_"), file_format="dp")]
    f = DependencyFeaturizer().fit(dp)
    assert (f.data_format_, f.pos_column_, f.labelled_, f.labels_) == ("dp", "xpos", False, [])
    assert f.encode_targets([DepTarget((2, 0), ("_", "_"), (1, 1))])[0][1].tolist() == [-1, -1]
    with pytest.raises(ConfigError, match="mixes CoNLL-U and .dp"):
        DependencyFeaturizer().fit(dp + SENTS)
    assert DependencyFeaturizer(pos_column="upos", labelled=False).fit(
        SENTS + dp).data_format_ == "mixed"


def test_state_round_trip_and_a_state_written_before_the_featurizer():
    task = DependencyTask(hash_bits=8, label_hash_bits=4).fit(_dataset(SENTS))
    state, arrays = task.get_state()
    # the keys and values the parser's model files held before the featurizer existed
    assert state == {"labels": ["nsubj", "obj", "punct", "root"], "labelled": True,
                     "single_root": True, "pos_column": "upos", "data_format": "conllu"}
    assert arrays == {}
    old = {"labels": ["nsubj", "obj", "punct", "root"], "labelled": True,
           "single_root": True, "pos_column": "upos", "data_format": "conllu"}
    again = DependencyTask.from_state(task.get_params(), old, {})
    assert again.get_state() == (state, {})
    assert np.array_equal(again.featurize(_dataset(SENTS)).pos,
                          task.featurize(_dataset(SENTS)).pos)
    assert (again.featurizer_.input_kind_, again.n_features) == ("tokens", task.n_features)
    with pytest.raises(InputError, match="input_kind is 'pixels'"):
        DependencyFeaturizer.from_state({**old, "input_kind": "pixels"})


def test_sklearn_conventions():
    f = DependencyFeaturizer(pos_column="upos", labelled=False)
    assert f.get_params() == {"pos": "gold", "pos_column": "upos", "labelled": False,
                              "classes": None, "tagger": None}
    assert clone(f).get_params() == f.get_params()
    with pytest.raises(NotFittedError, match="DependencyFeaturizer"):
        f.transform(SENTS)
    with pytest.raises(ConfigError, match="pos_column"):
        DependencyFeaturizer(pos_column="feats").fit(SENTS)
    with pytest.raises(ConfigError, match="pos_column must be 'upos' or 'auto'"):
        DependencyFeaturizer(pos="predicted", pos_column="xpos").fit(SENTS)
    with pytest.raises(InputError, match="no sentences"):
        DependencyFeaturizer().fit([])


class _Tagger:
    """Tags every word NOUN (what a UposTagger's ``tag`` returns: a tuple per sentence)."""

    def tag(self, sentences):
        return [("NOUN",) * len(s) for s in sentences]


def test_predicted_pos_comes_from_the_tagger_it_holds():
    with pytest.raises(ConfigError, match="needs a POS tagger"):
        DependencyFeaturizer(pos="predicted").fit(SENTS).transform(SENTS)
    X = DependencyFeaturizer(pos="predicted", tagger=_Tagger()).fit(SENTS).transform(SENTS)
    assert np.array_equal(X.pos[1:4], token_codes(SENTS[0].words, ("NOUN",) * 3)[2][1:])
    with pytest.raises(ConfigError, match="tag"):
        DependencyFeaturizer(tagger=object()).fit(SENTS)


def _all_noun_tagger():
    """A fitted PosTask over {NOUN, VERB} with zero weights: it tags every word NOUN."""
    pos_task = PosTask()
    pos_task.fit(pos_task.make_dataset([["Dogs", "bark"]], [["NOUN", "VERB"]]))
    return pos_task, np.zeros(pos_task.n_features)


def test_the_parser_has_one_parent_and_a_clone_does_not_share_a_new_tagger():
    assert DependencyTask.__bases__ == (ComposedTask,)  # it holds its DependencyStructure
    assert len(DependencyStructure.__bases__) == 1
    assert DependencyTask.structure_class is DependencyStructure
    task = DependencyTask(pos="predicted", hash_bits=8, label_hash_bits=4).fit(_dataset(SENTS))
    twin = clone(task)  # a fitted task clones to a shallow copy: one featurizer for both
    assert twin.featurizer_ is task.featurizer_
    twin.set_tagger(*_all_noun_tagger())
    assert task.featurizer_.tagger is None and not task.has_tagger()
    with pytest.raises(ConfigError, match="needs a POS tagger"):
        task.featurize(_dataset(SENTS))
    X = twin.featurize(_dataset(SENTS))
    assert np.array_equal(X.pos[1:4], token_codes(SENTS[0].words, ("NOUN",) * 3)[2][1:])
    assert twin.tag([["Cats", "see"]]) == [("NOUN", "NOUN")]
    # the tagger travels in the model file and comes back as the featurizer's
    state, arrays = twin.get_state()
    assert {"tagger_params", "tagger_state"} <= set(state) and "tagger_coef" in arrays
    again = DependencyTask.from_state(twin.get_params(), state, arrays)
    assert np.array_equal(again.featurize(_dataset(SENTS)).pos, X.pos)
    assert again.featurizer_.tagger is not None and again.has_tagger()


def test_the_parser_holds_an_immutable_structure_built_from_its_featurizer():
    """DependencyStructure is a standalone object the fitted task builds (issue 53)."""
    import pickle
    import warnings

    task = DependencyTask(hash_bits=8, label_hash_bits=4).fit(_dataset(SENTS))
    s = task.structure_
    assert type(s) is DependencyStructure and task.structure_object() is s
    assert s.labels == tuple(task.labels_) and s.labelled == task.is_labelled()
    assert s.single_root == task.resolved_single_root() and task.n_features == s.n_features
    with pytest.raises(AttributeError, match="immutable"):
        s.labelled = False
    with pytest.raises(ValueError):
        s.bins[0] = 99  # a read-only copy of the task's bins
    copy = pickle.loads(pickle.dumps(s))
    assert copy.n_features == s.n_features and copy.labels == s.labels
    X = task.featurize(_dataset(SENTS))
    w = np.random.default_rng(0).normal(size=task.n_features)
    view = task.structure()
    best = view.kbest(X[0], w, 2)
    assert [h.tolist() for h, _, _ in best] == [h.tolist() for h, _, _ in s.kbest(X[0], w, 2)]
    with pytest.warns(DeprecationWarning, match=r"DependencyTask.kbest is deprecated"):
        old = task.kbest(X[0], w, 2)
    assert [h.tolist() for h, _, _ in old] == [h.tolist() for h, _, _ in best]
    # the model file rebuilds the same structure; an old pickle (no structure_) builds it
    again = DependencyTask.from_state(task.get_params(), *task.get_state())
    assert again.structure_.n_features == s.n_features and again.structure_.labels == s.labels
    del again.__dict__["structure_"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert again.structure_object().labels == s.labels
