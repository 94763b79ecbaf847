"""The general featurizers (vocabulary, hashing, templates, target encoding): scikit-learn's
transformer contract, the ids they give, and their refusals."""

import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.feature_extraction import FeatureHasher
from sklearn.pipeline import make_pipeline
from sklearn.utils import murmurhash3_32

from latentstruct.data.features import FeatureIndex
from latentstruct.exceptions import ConfigError, InputError
from latentstruct.featurizers import (
    AttributeHasher,
    ClassEncoder,
    SequenceLabelEncoder,
    TokenTemplates,
    UnseenLabelError,
    Vocabulary,
    token_attributes,
)

DOCS = [["b", "a", "a"], ["c", "a"], ["b", "d"]]


def test_vocabulary_ids_first_seen_and_min_count():
    v = Vocabulary().fit(DOCS)
    assert v.get_feature_names_out().tolist() == ["b", "a", "c", "d"]
    assert [a.tolist() for a in v.transform([["d", "zzz", "a"]])] == [[3, 1]]
    assert len(v) == v.n_features_out_ == 4
    assert Vocabulary(min_count=2).fit(DOCS).get_feature_names_out().tolist() == ["b", "a"]


def test_vocabulary_frequency_order_sorts_by_count_ties_first_seen():
    v = Vocabulary(order="frequency").fit(DOCS)
    # a: 3, b: 2, c: 1 (seen before d), d: 1
    assert v.get_feature_names_out().tolist() == ["a", "b", "c", "d"]


def test_vocabulary_from_index_gives_the_stored_ids():
    index = FeatureIndex().fit([["x", "y"]])
    v = Vocabulary.from_index(index)
    assert [a.tolist() for a in v.transform([["y", "x"]])] == [[1, 0]]
    with pytest.raises(ConfigError, match="FeatureIndex"):
        Vocabulary.from_index(AttributeHasher().fit().index_)


def test_vocabulary_is_a_scikit_learn_transformer():
    v = Vocabulary(min_count=2, order="frequency")
    assert clone(v).get_params() == {"min_count": 2, "order": "frequency"}
    with pytest.raises(NotFittedError, match="This Vocabulary instance is not fitted yet"):
        v.transform(DOCS)
    fitted = pickle.loads(pickle.dumps(v.fit(DOCS)))
    assert [a.tolist() for a in fitted.transform([["b", "a"]])] == [[1, 0]]


@pytest.mark.parametrize("bad, match", [({"min_count": 0}, "'min_count' parameter"),
                                        ({"order": "alpha"}, "'order' parameter")])
def test_vocabulary_refuses_bad_parameters_on_fit(bad, match):
    with pytest.raises(ConfigError, match=match):
        Vocabulary(**bad).fit(DOCS)


def test_vocabulary_refuses_a_string_for_documents():
    with pytest.raises(InputError, match="single string"):
        Vocabulary().fit("abc")
    with pytest.raises(InputError, match="document 1 is a str"):
        Vocabulary().fit([["a"], "bc"])
    with pytest.raises(InputError, match="document 0 is a str"):
        Vocabulary(order="frequency").fit(["ab"])


def test_hasher_ids_are_unsigned_murmur_modulo_the_table():
    h = AttributeHasher(n_bits=10).fit()
    names = ["w=cat", "sh=Xx", "p1=c", "ünï"]
    expected = [murmurhash3_32(n, seed=0, positive=True) % 1024 for n in names]
    assert h.transform([names])[0].tolist() == expected
    assert len(h) == 1024
    # not FeatureHasher's bucket (the absolute value of the signed hash): saved models pin ours
    m = FeatureHasher(n_features=1024, input_type="string").transform([["w=cat"]])
    signed = murmurhash3_32("w=cat", seed=0)
    assert m.indices.tolist() == [abs(signed) % 1024]


def test_hasher_refuses_bad_n_bits():
    with pytest.raises(ConfigError, match="'n_bits' parameter"):
        AttributeHasher(n_bits=33).fit()
    with pytest.raises(NotFittedError):
        AttributeHasher().transform([["a"]])


def test_templates_match_the_function_and_take_pos():
    words, pos = ["The", "cat"], ["DET", "NOUN"]
    t = TokenTemplates(window=1, affix_length=2)
    assert t.fit_transform([words]) == [token_attributes(words, None, window=1, affix_length=2)]
    with_pos = t.transform([(words, pos)])[0]
    assert "p[0]=NOUN" in with_pos[1] and "p[-1]|p[0]=DET|NOUN" in with_pos[1]
    assert not any(a.startswith("p[") for a in t.transform([words])[0][1])


def test_templates_feed_a_vocabulary_in_a_pipeline():
    sentences = [["a", "b"], ["b", "c"]]
    tokens = [tok for sent in TokenTemplates(window=0, affix_length=1).fit_transform(sentences)
              for tok in sent]
    v = Vocabulary().fit(tokens)
    assert len(v.transform(tokens)) == 4 and "w=b" in v.get_feature_names_out()
    pipe = make_pipeline(TokenTemplates(window=0), Vocabulary())
    assert pipe.get_params()["tokentemplates__window"] == 0


@pytest.mark.parametrize("bad, match", [
    ("one sentence", "single string"), (["one sentence"], "sentence 0 is a string"),
    ([["a", 3]], r"X\[0\]\[1\] is a int"), ([(["a", "b"], ["DET"])], "2 words but 1 POS")])
def test_templates_refuse_malformed_sentences(bad, match):
    with pytest.raises(InputError, match=match):
        TokenTemplates().fit_transform(bad)


def test_templates_refuse_a_window_over_its_bound():
    with pytest.raises(ConfigError, match="'window' parameter"):
        TokenTemplates(window=11).fit()


def test_sequence_label_encoder_round_trip_and_declared_classes():
    enc = SequenceLabelEncoder(classes=["X"]).fit([["DET", "NOUN"], ["VERB"]])
    assert enc.classes_ == ["DET", "NOUN", "VERB", "X"]
    ids = enc.transform([["NOUN", "X"], []])
    assert [a.tolist() for a in ids] == [[1, 3], []] and ids[1].dtype == np.int64
    assert enc.inverse_transform(ids) == [["NOUN", "X"], []]


def test_sequence_label_encoder_names_an_unseen_label_and_its_place():
    enc = SequenceLabelEncoder().fit([["A", "B"]])
    with pytest.raises(UnseenLabelError, match=r"'C' at y\[1\]\[2\].*A, B") as info:
        enc.transform([["A"], ["B", "A", "C"]])
    assert info.value.label == "C" and info.value.example == 1
    with pytest.raises(InputError, match=r"y\[0\] is a string"):
        enc.fit(["AB"])
    with pytest.raises(InputError, match="cannot be ordered"):
        SequenceLabelEncoder().fit([["A", 1]])


def test_class_encoder_and_from_classes():
    enc = ClassEncoder().fit([3, 1, 3])
    assert enc.classes_ == [1, 3] and enc.transform([3, 1]).tolist() == [1, 0]
    with pytest.raises(UnseenLabelError, match=r"y\[1\]"):
        enc.transform([1, 2])
    stored = ClassEncoder.from_classes(["b", "a"])  # a model file's order is kept
    assert stored.transform(["a"]).tolist() == [1]
    assert pickle.loads(pickle.dumps(stored)).inverse_transform([0]) == ["b"]
