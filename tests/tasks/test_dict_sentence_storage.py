"""``DictSentence`` stores a sentence's attribute names flat, with its values as bool (0/1)
or float64 or not at all (every value 1); the per-token view, equality and featurising
give what the per-token tuples gave, and repeated names share one string object."""

from __future__ import annotations

import numpy as np
import pytest

from latentstruct.data.features import FeatureIndex, HashingIndex
from latentstruct.tasks import SequenceTask
from latentstruct.tasks.sequence.raw import DictSentence, dict_sentence

TOKENS = (("a", "b:x"), (), ("c",), ("a", "d", "e"))


@pytest.mark.parametrize("values, dtype", [
    (None, None),
    ([(1.0, 0.0), (), (1.0,), (0.0, 1.0, 1.0)], np.bool_),
    ([(1.0, 0.5), (), (-2.0,), (0.0, 1.0, 3.0)], np.float64),
])
def test_from_tokens_round_trips_the_per_token_view(values, dtype):
    rec = DictSentence.from_tokens(TOKENS, values)
    assert len(rec) == 4 and rec.attributes == TOKENS
    assert rec.names == ("a", "b:x", "c", "a", "d", "e") and rec.ends.tolist() == [2, 2, 3, 6]
    if values is None:
        assert rec.values is None and rec.flat_values is None
    else:
        assert rec.values == tuple(tuple(v) for v in values)
        assert rec.flat_values.dtype == dtype
    assert rec == DictSentence.from_tokens(TOKENS, values)
    assert rec != DictSentence.from_tokens(TOKENS[:3], None)
    with pytest.raises(TypeError):
        hash(rec)


def test_an_empty_sentence():
    rec = DictSentence.from_tokens([])
    assert len(rec) == 0 and rec.attributes == () and rec.names == ()


def test_feature_dicts_share_their_built_names():
    rec = dict_sentence([{"w": "the", "n": {"k": "v"}}, {"w": "the", "n": {"k": "v"}}], 0)
    assert rec.attributes == (("w:the", "n:k:v"), ("w:the", "n:k:v"))
    assert rec.names[0] is rec.names[2] and rec.names[1] is rec.names[3]
    assert rec.flat_values is None


def test_bools_are_kept_as_zero_one_values():
    rec = dict_sentence([{"up": False, "t": True, "w": "x"}], 0)
    assert rec.values == ((0.0, 1.0, 1.0),) and rec.flat_values.dtype == np.bool_


@pytest.mark.parametrize("index", [FeatureIndex(), HashingIndex(n_bits=8)])
def test_lookup_all_keeps_one_entry_per_name(index):
    if isinstance(index, FeatureIndex):
        index.fit([["a", "b", "a"]])
    ids = index.lookup_all(("a", "zz", "b"))
    assert ids.shape == (3,)
    assert ids.tolist() == [index.lookup("a"), index.lookup("zz"), index.lookup("b")]
    assert index.lookup_all(()).shape == (0,)


def test_featurize_drops_unknown_names_and_zero_values_per_token():
    task = SequenceTask()
    task.fit(task.make_dataset([[{"a": 1, "b": 1}, {"c": 1}]], [["X", "Y"]]))
    X = task.featurize(task.make_dataset([[{"a": 1, "new": 1, "b": False}, {"c": 2.5},
                                           {"zz": 1}]]))
    a, b, c = (task.attr_index_.lookup(n) for n in "abc")
    assert X.attr_indptr.tolist() == [0, 1, 2, 2]
    assert X.attr_ids.tolist() == [a, c] and X.attr_values.tolist() == [1.0, 2.5]
