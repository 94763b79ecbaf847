"""The hidden-state CRF as a featurizer plus a structure: HiddenChainFeaturizer gives the
task's corpus and class ids, refuses another input form or width and unseen labels, and is
rebuilt from a model file's state."""

import numpy as np
import pytest
from sklearn.base import clone

from latentstruct.exceptions import InputError, NotFittedError
from latentstruct.featurizers import token_attributes
from latentstruct.tasks.base import Dataset
from latentstruct.tasks.hidden_chain import HiddenChainFeaturizer, HiddenChainTask

SENTENCES = [["the", "cat", "sat"], ["Dogs", "bark"], ["a", "b", "c", "d"], ["cat"]]
LABELS = ["good", "bad", 2, "good"]


def fitted(X=SENTENCES, y=LABELS, **params):
    task = HiddenChainTask(min_count=1, window=0, affix_length=1, **params)
    data = task.make_dataset(X, y)
    return task.fit(data), data


def test_the_task_delegates_to_its_featurizer():
    task, data = fitted()
    f = task.featurizer_
    assert f.get_params() == {"window": 0, "affix_length": 1, "min_count": 1, "classes": None}
    assert task.classes_ == f.classes_ == (2, "bad", "good")  # ints first, then strings
    assert (task.attributes_, task.n_columns_) == ("templates", 0)
    X = task.featurize(data)
    Y = clone(f).fit(data.records, LABELS).transform(data.records)
    np.testing.assert_array_equal(X.attr_ids, Y.attr_ids)
    np.testing.assert_array_equal(X.attr_indptr, Y.attr_indptr)
    names = f.get_feature_names_out()
    first = [names[i] for i in X.attr_ids[X.attr_indptr[0]:X.attr_indptr[1]]]
    assert first == token_attributes(["the", "cat", "sat"], None, window=0, affix_length=1)[0]
    np.testing.assert_array_equal(task.encode_targets(["bad", 2, "good"]), [1, 0, 2])
    assert task.decode_predictions(np.array([2, 0])) == ["good", 2]


def test_declared_classes_replace_the_targets_and_unseen_labels_are_refused():
    f = HiddenChainFeaturizer(min_count=1, classes=["x", "y", "z"])
    f.fit(HiddenChainTask().make_dataset(SENTENCES).records, ["x"] * 4)
    assert f.classes_ == ("x", "y", "z")
    with pytest.raises(InputError, match=r"target 1 is 'w', not one of the classes the task "
                                         r"was fitted on: \['x', 'y', 'z'\]"):
        f.encode_targets(["z", "w"])
    with pytest.raises(InputError, match="one class only"):
        HiddenChainFeaturizer().fit([], ["a", "a"])
    with pytest.raises(InputError, match="need labels"):
        HiddenChainFeaturizer().fit([])


def test_one_class_is_refused_at_the_file_of_the_data():
    task = HiddenChainTask(min_count=1)
    made = task.make_dataset(SENTENCES, ["a"] * 4)
    data = Dataset(made.records, made.targets, "train.txt")
    with pytest.raises(InputError, match="one class only") as err:
        task.fit(data)
    assert err.value.path == "train.txt"


def test_numbers_set_the_form_and_width_and_another_is_refused():
    rng = np.random.default_rng(0)
    arrays = [rng.normal(size=(len(s), 3)) for s in SENTENCES]
    task, data = fitted(list(zip(SENTENCES, arrays)), [1, -1, 1, -1])
    f = task.featurizer_
    assert (f.attributes_, f.n_columns_) == ("tokens+arrays", 3)
    assert f.n_features_out_ == len(f.index_) + 3 == task.n_attributes
    assert list(f.get_feature_names_out()[-3:]) == ["column 0", "column 1", "column 2"]
    X = task.featurize(data)
    tok0 = X.attr_ids[X.attr_indptr[0]:X.attr_indptr[1]]
    np.testing.assert_array_equal(tok0[-3:], len(f.index_) + np.arange(3))
    np.testing.assert_allclose(X.attr_values[X.attr_indptr[1] - 3:X.attr_indptr[1]],
                               arrays[0][0])
    with pytest.raises(InputError, match="'hcrf' model was trained on"):
        f.transform(task.make_dataset(SENTENCES).records)
    narrow = task.make_dataset([(s, a[:, :2]) for s, a in zip(SENTENCES, arrays)])
    with pytest.raises(InputError, match="trained on arrays of 3 columns"):
        f.transform(narrow.records)


def test_from_state_rebuilds_the_fitted_featurizer():
    task, data = fitted()
    f = task.featurizer_
    g = HiddenChainFeaturizer.from_state(f.index_, list(f.classes_), window=0,
                                         affix_length=1, min_count=1)
    assert (g.classes_, g.attributes_, g.n_columns_) == (f.classes_, "templates", 0)
    np.testing.assert_array_equal(g.transform(data.records).attr_ids,
                                  f.transform(data.records).attr_ids)
    with pytest.raises(NotFittedError, match="HiddenChainFeaturizer"):
        HiddenChainFeaturizer().transform(data.records)
    assert not hasattr(HiddenChainTask(), "classes_")  # unfitted: no featurizer to ask
