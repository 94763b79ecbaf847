"""The grammaticality task as a featurizer plus a structure: GrammaticalityFeaturizer gives
the corpus the task featurises, the task holds a ViewsStructure, and the featurizer rebuilt from a
model file."""

import numpy as np
import pytest
from sklearn.base import clone

from latentstruct.exceptions import InputError, NotFittedError
from latentstruct.tasks import GrammaticalityTask
from latentstruct.tasks.base import (BinaryDecisions, ComposedBinaryTask, ComposedTask, Dataset,
                                     LatentBinaryDefaults)
from latentstruct.tasks.grammaticality import (
    GrammaticalityFeaturizer,
    Sentence,
    ViewsStructure,
    ngram_attributes,
)
from latentstruct.tasks.grammaticality.data import LanguageModelData

TAGGED = [(("Shares", "rose", "."), ("NOUN", "VERB", "PUNCT")),
          (("Prices", "rose", "sharply", "."), ("NOUN", "VERB", "ADV", "PUNCT")),
          (("Shares", "fell", "."), ("NOUN", "VERB", "PUNCT"))]


def records():
    return [Sentence(w, p) for w, p in TAGGED]


def test_the_task_holds_its_featurizer_and_the_views_structure():
    assert GrammaticalityTask.__bases__ == (LanguageModelData, ComposedBinaryTask)
    assert ComposedBinaryTask.__bases__ == (BinaryDecisions, ComposedTask)
    assert ViewsStructure.__bases__ == (LatentBinaryDefaults,)
    assert GrammaticalityTask.structure_class is ViewsStructure
    task = GrammaticalityTask(min_count=1, views="iob2,oc").fit(Dataset(records(), [1, 1, -1]))
    assert isinstance(task.structure_, ViewsStructure)
    assert [v.name for v in task.structure_.views_] == ["iob2", "oc"]
    assert isinstance(task.featurizer_, GrammaticalityFeaturizer)
    assert task.featurizer_.get_params() == {"min_count": 1}
    X = task.featurize(Dataset(records(), [1, 1, -1]))
    Y = GrammaticalityFeaturizer(min_count=1).fit(TAGGED).transform(TAGGED)
    for a in ("attr_indptr", "attr_ids", "offsets"):
        np.testing.assert_array_equal(getattr(X, a), getattr(Y, a))
    structure = task.structure_
    assert structure.n_attributes == task.featurizer_.n_features_out_ == len(task.attr_index_)
    # iob2: 23 tags, oc: 45 tags over the 11 CoNLL-2000 types; one bias
    A = structure.n_attributes
    assert task.n_features == sum(A * L + L * L + 2 * L for L in (23, 45)) + 1


def test_vocabulary_keeps_min_count_and_drops_unknown_attributes():
    f = GrammaticalityFeaturizer(min_count=2).fit(TAGGED)
    names = set(f.get_feature_names_out())
    counts = {}
    for words, pos in TAGGED:
        for tok in ngram_attributes(words, pos):
            for a in tok:
                counts[a] = counts.get(a, 0) + 1
    assert names == {a for a, c in counts.items() if c >= 2}
    assert "w=rose" in names and "w=fell" not in names
    X = f.transform([(("Shares", "fell"), ("NOUN", "VERB"))])
    ids = X.attr_ids[X.attr_indptr[1]:X.attr_indptr[2]]  # "fell": only its known attributes
    assert [f.get_feature_names_out()[i] for i in ids] == [
        a for a in ngram_attributes(["Shares", "fell"], ["NOUN", "VERB"])[1] if a in names]


def test_records_with_tags_are_taken_and_untagged_ones_refused():
    f = GrammaticalityFeaturizer(min_count=1)
    a = f.fit(records()).transform(records())
    b = clone(f).fit(TAGGED).transform(TAGGED)
    np.testing.assert_array_equal(a.attr_ids, b.attr_ids)
    with pytest.raises(InputError, match="sentence 1 has no POS tags"):
        f.transform([TAGGED[0], Sentence(("a", "b"))])
    with pytest.raises(InputError, match="sentence 0: expected a list of words and one POS"):
        f.transform([(("a", "b"), ("DET",))])
    with pytest.raises(NotFittedError, match="GrammaticalityFeaturizer"):
        GrammaticalityFeaturizer().transform(TAGGED)


def test_from_index_gives_the_ids_of_the_fitted_featurizer():
    f = GrammaticalityFeaturizer(min_count=1).fit(TAGGED)
    g = GrammaticalityFeaturizer.from_index(f.index_)
    assert g.min_count == 1
    np.testing.assert_array_equal(f.transform(TAGGED).attr_ids, g.transform(TAGGED).attr_ids)


def test_a_loaded_task_rebuilds_its_featurizer_from_the_saved_arrays():
    task = GrammaticalityTask(min_count=1).fit(Dataset(records(), [1, 1, -1]))
    arrays = dict(task.featurizer_.index_.to_arrays(prefix="gattr_"))
    fresh = GrammaticalityTask(min_count=1)
    assert not hasattr(fresh, "attr_index_")
    fresh.featurizer_ = GrammaticalityFeaturizer.from_index(task.featurizer_.index_)
    fresh._build_structure()
    assert fresh.n_features == task.n_features
    assert list(fresh.attr_index_.names) == list(task.attr_index_.names)
    assert sorted(arrays) == ["gattr_kind", "gattr_min_count", "gattr_names_offsets",
                              "gattr_names_utf8"]
