"""ChainFeaturizer (tasks/sequence/featurizer.py): the sequence tasks' featurizer, alone and
as the task holds it; the task's structure (ChainStructure) and its declared parameters."""

import pickle

import numpy as np
import pytest
from sklearn.base import clone

from latentstruct.exceptions import ConfigError, InputError, NotFittedError
from latentstruct.featurizers import SequenceLabelEncoder, TokenTemplates, UnseenLabelError
from latentstruct.tasks import ChunkTask, CitationTask, PosTask
from latentstruct.tasks.sequence import SequenceLabellingTask, SequenceTask
from latentstruct.tasks.sequence.citations import CitationFeaturizer, citation_attributes
from latentstruct.tasks.sequence.featurizer import ChainFeaturizer
from latentstruct.tasks.sequence.structure import ChainStructure

WORDS = [["The", "dog", "barks", "."], ["The", "cat", "sleeps"], ["A", "dog", "sleeps"]]
TAGS = [["DET", "NOUN", "VERB", "PUNCT"], ["DET", "NOUN", "VERB"], ["DET", "NOUN", "VERB"]]


def _corpus_equal(a, b) -> bool:
    return (np.array_equal(a.attr_indptr, b.attr_indptr) and np.array_equal(a.attr_ids, b.attr_ids)
            and np.array_equal(a.offsets, b.offsets)
            and (a.attr_values is None) == (b.attr_values is None))


def test_ids_by_descending_count_over_the_templates():
    f = ChainFeaturizer(window=0, affix_length=1).fit(WORDS)
    names = f.get_feature_names_out().tolist()
    strings = [a for s in TokenTemplates(window=0, affix_length=1).transform(WORDS)
               for tok in s for a in tok]
    counts = [strings.count(n) for n in names]
    assert counts == sorted(counts, reverse=True) and set(names) == set(strings)
    assert names[0] == "b" and counts[0] == 10  # the bias, on every token
    X = f.transform([["the", "dog"], ["zebra"]])
    assert len(X) == 2 and X.n_tokens == 3 and X.attr_values is None
    # "the" lowercased is known (l[0]=the); the word "the" itself is not ("w=The" is)
    tok0 = X.attr_ids[X.attr_indptr[0]:X.attr_indptr[1]]
    assert [names[i] for i in tok0] == ["b", "sh=x", "p1=t", "s1=e", "l[0]=the",
                                        "l[-1]|l[0]=<s>|the", "l[0]|l[1]=the|dog"]


def test_min_count_hashing_and_pos_templates():
    assert len(ChainFeaturizer(min_count=3).fit(WORDS).index_) < len(ChainFeaturizer().fit(WORDS).index_)
    hashed = ChainFeaturizer(feature_index="hashing", hash_bits=6).fit(WORDS)
    assert len(hashed.index_) == 64 and hashed.n_features_out_ == 64
    assert hashed.transform(WORDS).attr_ids.max() < 64
    pairs = [(["He", "ran"], ["PRP", "VBD"])]
    with_pos = ChainFeaturizer(uses_pos=True).fit(pairs).get_feature_names_out().tolist()
    without = ChainFeaturizer().fit(pairs).get_feature_names_out().tolist()
    assert "p[0]=PRP" in with_pos and not any(n.startswith("p[0]=") for n in without)


def test_the_task_delegates_to_its_featurizer_and_encoder():
    task = PosTask(window=1)
    data = task.make_dataset(WORDS, TAGS)
    task.fit(data)
    assert isinstance(task.featurizer_, ChainFeaturizer) and task.featurizer_.window == 1
    assert task.attr_index_ is task.featurizer_.index_ and task.attributes_ == "templates"
    assert task.labels_ == task.target_encoder_.classes_ == ["DET", "NOUN", "PUNCT", "VERB"]
    alone = ChainFeaturizer(window=1, affix_length=4).fit(WORDS)
    assert alone.get_feature_names_out().tolist() == task.featurizer_.get_feature_names_out().tolist()
    assert _corpus_equal(alone.transform(WORDS), task.featurize(data))
    assert [y.tolist() for y in task.encode_targets(TAGS[:1])] == [[0, 1, 3, 2]]
    with pytest.raises(UnseenLabelError, match=r"'ADJ' at y\[0\]\[1\] .* DET, NOUN, PUNCT, VERB"):
        task.encode_targets([["DET", "ADJ"]])


def test_kinds_are_learned_and_others_refused_naming_the_task():
    dicts = [[{"w": w.lower(), "len": float(len(w))} for w in s] for s in WORDS]
    task = SequenceTask()
    task.fit(task.make_dataset(dicts, TAGS))
    assert task.attributes_ == "dicts" and task.featurizer_.attribute_names_ == "crfsuite"
    assert task.featurize(task.make_dataset(dicts)).attr_values is not None  # len's values
    pos = PosTask()
    with pytest.raises(InputError, match="this 'sequence' model was trained on per-token feature"):
        task.featurize(pos.make_dataset(WORDS))
    arrays = [np.arange(2 * len(s), dtype=float).reshape(len(s), 2) for s in WORDS]
    pos.fit(pos.make_dataset(arrays, TAGS))
    assert (pos.attributes_, pos.n_columns_, len(pos.attr_index_), pos.n_attributes) == (
        "arrays", 2, 0, 2)
    with pytest.raises(InputError, match="sentence 0 has 3 feature columns but this 'pos' model"):
        pos.featurize(pos.make_dataset([np.ones((2, 3))]))
    f = ChainFeaturizer().fit(pos.make_dataset(arrays).records)  # NumericSentence records
    with pytest.raises(InputError, match="this 'chain' model was trained on numeric arrays"):
        f.transform(WORDS)
    assert f.get_feature_names_out().tolist() == ["column 0", "column 1"]


def test_the_model_file_state_rebuilds_the_featurizer():
    for task, X in ((ChunkTask(window=1), [list(zip(s, ["DT", "NN", "VB", "."])) for s in WORDS]),
                    (PosTask(feature_index="hashing", hash_bits=8), WORDS)):
        data = task.make_dataset(X, [["B-NP", "I-NP", "B-VP", "O"][:len(s)] for s in WORDS]
                                 if task.name == "chunk" else TAGS)
        task.fit(data)
        state, arrays = task.get_state()
        assert set(state) >= {"labels", "attributes", "attribute_names"}
        assert all(k.startswith("attr_") for k in arrays)
        again = type(task).from_state(task.get_params(), state, arrays)
        assert type(again.featurizer_.vocabulary_) is type(task.featurizer_.vocabulary_)
        assert again.featurizer_.get_params() == task.featurizer_.get_params()
        assert again.labels_ == task.labels_
        assert _corpus_equal(again.featurize(data), task.featurize(data))
        assert np.array_equal(again.featurize(data).attr_ids, task.featurize(data).attr_ids)


def test_citations_use_their_own_templates():
    tokens = [["A.", "Smith.", "Parsing.", "1998."]]
    task = CitationTask()
    task.fit(task.make_dataset(tokens, [["author", "author", "title", "date"]]))
    assert isinstance(task.featurizer_, CitationFeaturizer)
    expected = citation_attributes(tokens[0], window=1, affix_length=3)
    sentence = task.reader.sentences(task.make_dataset(tokens).records)[0]
    assert task.featurizer_.attribute_strings(sentence) == expected
    assert set(task.featurizer_.get_feature_names_out()) == {a for tok in expected for a in tok}


def test_featurizer_is_a_scikit_learn_transformer():
    f = ChainFeaturizer(min_count=2, window=1)
    assert clone(f).get_params() == f.get_params()
    with pytest.raises(NotFittedError, match="ChainFeaturizer instance is not fitted"):
        f.transform(WORDS)
    fitted = f.fit(WORDS)
    assert _corpus_equal(pickle.loads(pickle.dumps(fitted)).transform(WORDS), fitted.transform(WORDS))
    with pytest.raises(ConfigError, match=r"'hash_bits' parameter of ChainFeaturizer .* Got 30 "
                                          r"instead: .*\(8 GiB per label at hash_bits=30\)"):
        ChainFeaturizer(feature_index="hashing", hash_bits=30).fit(WORDS)
    with pytest.raises(InputError, match="takes a list of sentences, got a single string"):
        fitted.transform("The dog")


def test_the_task_holds_its_structure():
    """A sequence task composes a featurizer, a label encoder and a ChainStructure built from
    them; it is not a structure itself (issue 53)."""
    import warnings

    from latentstruct.tasks.base import ComposedTask, MaxDecodableDefaults, Task

    assert PosTask.__mro__[1:4] == (SequenceLabellingTask, ComposedTask, Task)
    assert not issubclass(PosTask, (ChainStructure, MaxDecodableDefaults))
    task = PosTask().fit(PosTask().make_dataset(WORDS, TAGS))
    chain = task.structure_
    assert type(chain) is ChainStructure and task.structure_object() is chain
    assert (chain.n_labels, chain.n_attributes) == (len(task.labels_),
                                                    task.featurizer_.n_features_out_)
    assert task.n_features == chain.n_features == chain.n_attributes * chain.n_labels \
        + chain.n_labels ** 2 + 2 * chain.n_labels
    with pytest.raises(AttributeError, match="immutable"):
        chain.n_labels = 3
    copy = pickle.loads(pickle.dumps(chain))
    assert (copy.n_labels, copy.n_attributes) == (chain.n_labels, chain.n_attributes)
    with pytest.raises(ValueError, match="n_labels must be an int >= 0"):
        ChainStructure(-1, 3)
    # the learner's view delegates to the chain; a refit builds a new chain and a new view
    view = task.structure()
    X = task.featurize(task.make_dataset(WORDS))
    w = np.random.default_rng(0).normal(size=task.n_features)
    assert [list(y) for y in view.argmax_batch(X, w)] == \
        [list(y) for y in chain.argmax_batch(X, w)]
    task.fit(task.make_dataset(WORDS + [["new", "words"]], TAGS + [["NOUN", "NOUN"]]))
    assert task.structure_ is not chain and task.structure() is not view
    assert task.structure().n_features == task.structure_.n_features
    # the chain's members on the task: still there, deprecated
    with pytest.warns(DeprecationWarning, match=r"PosTask.argmax_batch is deprecated: .* use "
                                                r"task.structure_.argmax_batch"):
        old = task.argmax_batch(task.featurize(task.make_dataset(WORDS)),
                                np.zeros(task.n_features))
    assert len(old) == len(WORDS)
    with pytest.raises(NotFittedError, match="PosTask instance is not fitted yet"):
        PosTask().argmax_batch  # noqa: B018 - unfitted: no structure to forward to
    assert not hasattr(PosTask(), "argmax_batch")  # NotFittedError is an AttributeError
    with pytest.raises(AttributeError, match="no attribute 'no_such_member'"):
        PosTask().no_such_member  # noqa: B018
    # an unfitted task's fitted attributes still say why they are missing
    with pytest.raises(AttributeError, match="the 'pos' task is not fitted"):
        PosTask().labels_  # noqa: B018
    assert getattr(PosTask(), "labels_", None) is None
    # a task pickled before it held its structure (no structure_) builds it on first use
    del task.__dict__["structure_"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert task.structure_object().n_labels == len(task.labels_)


def test_a_task_subclass_that_overrides_the_chain_is_refused():
    with pytest.raises(TypeError, match=r"Broken defines argmax, loss, which belong to the "
                                        r"structure .* subclass ChainStructure .* set "
                                        r"structure_class"):
        class Broken(PosTask):
            def argmax(self, x, w, y_true=None, *, random_state=None): ...

            def loss(self, y_true, y_pred): ...

    class Tracing:  # a mixin's override would be ignored just the same
        def argmax_batch(self, X, w, Y=None, *, random_state=None): ...

    with pytest.raises(TypeError, match=r"Traced defines argmax_batch, which belongs to the "
                                        r"structure"):
        class Traced(Tracing, PosTask):
            pass

    class Chain(ChainStructure):
        def loss(self, y_true, y_pred):
            return 2.0 * super().loss(y_true, y_pred)

    class Doubled(PosTask):
        structure_class = Chain

    task = Doubled().fit(PosTask().make_dataset(WORDS, TAGS))
    assert type(task.structure_) is Chain
    y = task.encode_targets(TAGS)[0]
    assert task.structure().loss(y, np.roll(y, 1)) == 2.0 * np.count_nonzero(y != np.roll(y, 1))


def test_structure_and_parameters():
    assert not any("_validate_params" in vars(c) for c in PosTask.__mro__)
    for bad, match in (({"feature_index": "bogus"}, r"'feature_index' parameter .* among "
                                                    r"\{'index', 'hashing'\}"),
                       ({"n_binary": -1}, r"'n_binary' parameter .* \[0, inf\)\. Got -1"),
                       ({"min_count": 0}, r"'min_count' parameter .* Got 0 instead")):
        with pytest.raises(ConfigError, match=match):
            PosTask(**bad).fit(PosTask().make_dataset(WORDS, TAGS))
    with pytest.raises(ConfigError, match=r"'hash_bits' parameter of the 'sequence' task .* "
                                          r"\(128 GiB per label at hash_bits=34\)"):
        SequenceTask(hash_bits=34).check_params()
    enc = SequenceLabelEncoder.from_classes(["A", "B"])
    assert [y.tolist() for y in enc.transform([["B", "A"]])] == [[1, 0]]
