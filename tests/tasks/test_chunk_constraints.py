"""The chunker decodes (and trains) only well-formed tag sequences of its training scheme
(``ChunkTask(constrained="auto" | True | False)``): the decision, its refusals and warning,
what every learner then predicts, and the model file (an older file decodes freely)."""

import warnings

import numpy as np
import pytest

from latentstruct import Chunker
from latentstruct.exceptions import InputError, ModelFormatError
from latentstruct.tasks import ChunkTask
from latentstruct.tasks.sequence.encodings import is_well_formed, well_formed_constraints

X = [[("He", "PRP"), ("reckons", "VBZ"), ("the", "DT"), ("deficit", "NN")],
     [("Rockwell", "NNP"), ("said", "VBD"), ("the", "DT"), ("agreement", "NN")],
     [("In", "IN"), ("Britain", "NNP"), (",", ","), ("it", "PRP"), ("rose", "VBD")]]
Y = [["B-NP", "B-VP", "B-NP", "I-NP"], ["B-NP", "B-VP", "B-NP", "I-NP"],
     ["B-PP", "B-NP", "O", "B-NP", "B-VP"]]


def _fit(**params):
    task = ChunkTask(**params)
    return task.fit(task.make_dataset(X, Y))


def test_auto_constrains_a_chunker_whose_training_tags_are_well_formed():
    task = _fit()
    assert task.constrained == "auto" and task.constrained_ is True and task.tag_scheme_ == "iob2"
    assert task.structure_.constraints == well_formed_constraints(task.labels_, "iob2")
    assert _fit(constrained=False).structure_.constraints is None


def test_every_prediction_is_well_formed_where_free_decoding_is_not():
    free, kept = _fit(constrained=False), _fit()
    # weights that favour I-NP everywhere: free decoding starts a sentence with I-NP
    w = np.zeros(free.structure_.n_features)
    _, trans, start, _ = free.structure_.split_weights(w)
    start[free.labels_.index("I-NP")] = 5.0
    trans[free.labels_.index("O"), free.labels_.index("I-NP")] = 5.0
    X_test = free.featurize(free.make_dataset(X))
    free_tags = free.decode_predictions(free.structure_.argmax_batch(X_test, w))
    kept_tags = kept.decode_predictions(kept.structure_.argmax_batch(X_test, w))
    assert not all(is_well_formed(t, "iob2") for t in free_tags)
    assert all(is_well_formed(t, "iob2") for t in kept_tags)


@pytest.mark.parametrize("learner, options", [
    ("ssvm", {"max_iter": 3}), ("perceptron", {"max_iter": 3}), ("crf", {"max_iter": 3}),
    ("pa", {"max_iter": 3}), ("sgd-ssvm", {"n_epochs": 3}), ("frank-wolfe", {"max_iter": 3}),
    ("distro", {"n_iter": 2})])
def test_every_learner_trains_a_constrained_chunker(learner, options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # few iterations on three sentences
        chunker = Chunker(learner=learner, **options).fit(X, Y)
    assert chunker.task_.constrained_ is True
    assert all(is_well_formed(t, "iob2") for t in chunker.predict(X))
    assert chunker.score(X, Y) > 0.5


def test_ill_formed_training_tags_are_refused_or_warned_about():
    bad = Y[:2] + [["B-PP", "I-NP", "O", "B-NP", "B-VP"]]  # I-NP after B-PP, sentence 2
    with pytest.raises(InputError, match=r"training sentence 2 is not a well-formed IOB2 "
                                         r"sequence \('I-NP' after 'B-PP' at token 1\)"):
        ChunkTask(constrained=True).fit(ChunkTask().make_dataset(X, bad))
    task = ChunkTask()
    with pytest.warns(UserWarning, match="training sentence 2 is not a well-formed IOB2"):
        task.fit(task.make_dataset(X, bad))
    assert task.constrained_ is False and task.structure_.constraints is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ChunkTask(constrained=False).fit(task.make_dataset(X, bad)).constrained_ is False


def test_constrained_is_checked_and_saved_with_the_model():
    from latentstruct.exceptions import ConfigError

    with pytest.raises(ConfigError, match="constrained"):
        ChunkTask(constrained="yes").check_params()
    task = _fit()
    state, arrays = task.get_state()
    assert state["constrained"] is True and state["tag_scheme"] == "iob2"
    again = ChunkTask.from_state(task.get_params(), state, arrays)
    assert again.constrained_ is True and again.structure_.constraints == task.structure_.constraints
    old = {k: v for k, v in state.items() if k != "constrained"}  # a file from before
    assert ChunkTask.from_state(task.get_params(), old, arrays).structure_.constraints is None
    for damaged in [{**state, "constrained": "yes"}, {**state, "tag_scheme": None}]:
        with pytest.raises(ModelFormatError, match="constrained"):
            ChunkTask.from_state(task.get_params(), damaged, arrays)


def test_a_saved_chunker_predicts_the_same_well_formed_tags(tmp_path):
    from latentstruct.estimators import load

    chunker = Chunker(max_iter=3).fit(X, Y)
    chunker.save(tmp_path / "c.npz")
    back = load(tmp_path / "c.npz")
    assert back.task_.constrained_ is True and back.predict(X) == chunker.predict(X)


def test_a_later_partial_fit_batch_with_an_ill_formed_sentence_is_refused():
    chunker = Chunker(learner="perceptron")
    chunker.partial_fit(X, Y, classes=["B-NP", "I-NP", "B-VP", "B-PP", "O"])
    assert chunker.task_.constrained_ is True
    before = chunker.learner_.coef_.copy()
    bad = [["B-NP", "B-VP", "O", "I-NP"]]  # I-NP after O: not IOB2
    with pytest.raises(InputError, match=r"sentence 0 of this batch .*'I-NP' after 'O' at token 3"):
        chunker.partial_fit(X[:1], bad)
    np.testing.assert_array_equal(chunker.learner_.coef_, before)  # nothing was learned
    chunker.partial_fit(X[:1], Y[:1])  # a well-formed batch still trains
    free = Chunker(learner="perceptron", constrained=False)
    free.partial_fit(X, Y, classes=["B-NP", "I-NP", "B-VP", "B-PP", "O"])
    free.partial_fit(X[:1], bad)  # decoding freely, any tags train
