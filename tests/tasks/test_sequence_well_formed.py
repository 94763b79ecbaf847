"""Well-formed chunk tags on by default for the generic ``sequence`` task and
``latentstruct.crfsuite.CRF`` (``constrained="auto"``), as for the chunker."""

import warnings

import numpy as np
import pytest

from latentstruct import Estimator, load
from latentstruct.crfsuite import CRF
from latentstruct.exceptions import InputError
from latentstruct.tasks.sequence.chunk_metrics import detect_tag_scheme
from latentstruct.tasks.sequence.encodings import is_well_formed, well_formed_constraints

rng = np.random.default_rng(0)
WORDS = ["john", "smith", "lives", "in", "new", "york", "city", "mary", "went", "to"]


def _sentence(n):
    return [{"w": WORDS[i], "b": 1.0} for i in rng.integers(0, len(WORDS), n)]


X = [[{"w": "john"}, {"w": "smith"}, {"w": "lives"}, {"w": "in"}, {"w": "new"}, {"w": "york"}],
     [{"w": "mary"}, {"w": "went"}, {"w": "to"}, {"w": "york"}, {"w": "city"}]]
Y_IOB2 = [["B-PER", "I-PER", "O", "O", "B-LOC", "I-LOC"], ["B-PER", "O", "O", "B-LOC", "I-LOC"]]
Y_BIOES = [["B-PER", "E-PER", "O", "O", "B-LOC", "E-LOC"], ["S-PER", "O", "O", "B-LOC", "E-LOC"]]


@pytest.mark.parametrize("y, scheme", [(Y_IOB2, "iob2"), (Y_BIOES, "oc")])
def test_chunk_tags_are_decoded_well_formed_by_default(y, scheme):
    est = Estimator(task="sequence", learner="perceptron", max_iter=3).fit(X, y)
    task = est.task_
    assert task.tag_scheme_ == scheme and task.constrained_
    assert task.structure_.constraints == well_formed_constraints(task.labels_, scheme)
    for tags in est.predict([_sentence(int(n)) for n in rng.integers(1, 9, 40)]):
        assert is_well_formed(tags, scheme)
    free = Estimator(task="sequence", learner="perceptron", max_iter=3,
                     constrained=False).fit(X, y)
    assert not free.task_.constrained_ and free.task_.structure_.constraints is None


def test_other_labels_leave_the_chain_free():
    y = [["NN", "NN", "VB", "IN", "JJ", "NN"], ["NN", "VB", "TO", "NN", "NN"]]
    est = Estimator(task="sequence", learner="perceptron", max_iter=2).fit(X, y)
    assert est.task_.tag_scheme_ is None and not est.task_.constrained_
    # tags of no chunk scheme (a bare B, a word that starts with B) are told apart, not errors
    assert detect_tag_scheme([["B", "I", "O"], ["Bob", "I-PER"]]) is None
    with pytest.raises(InputError, match="needs the training tags' chunk scheme"):
        Estimator(task="sequence", learner="perceptron", constrained=True).fit(X, y)


def test_an_ill_formed_training_sentence_warns_and_decodes_freely():
    # the scheme is the majority's (IOB2 here); the second sentence breaks it
    X3 = X + [[{"w": "mary"}, {"w": "went"}]]
    y = [["B-PER", "I-PER", "O", "O", "B-LOC", "I-LOC"], ["I-PER", "O", "O", "B-LOC", "I-LOC"],
         ["B-PER", "O"]]
    with pytest.warns(UserWarning, match="training sentence 1 is not a well-formed IOB2 "
                                         "sequence \\('I-PER' first at token 0\\), so the "
                                         "model decodes"):
        est = Estimator(task="sequence", learner="perceptron", max_iter=2).fit(X3, y)
    assert not est.task_.constrained_
    with pytest.raises(InputError, match="constrained=True decodes only well-formed"):
        Estimator(task="sequence", learner="perceptron", constrained=True).fit(X3, y)


def test_a_saved_sequence_model_keeps_its_decision(tmp_path):
    est = Estimator(task="sequence", learner="crf").fit(X, Y_IOB2)
    est.save(tmp_path / "m.json")
    back = load(tmp_path / "m.json")
    assert back.task_.constrained_ and back.task_.tag_scheme_ == "iob2"
    test = [_sentence(5) for _ in range(10)]
    assert back.predict(test) == est.predict(test)


def test_the_crfsuite_layer_is_constrained_by_default_and_crfsuite_exactly_without():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        crf = CRF(max_iterations=20).fit(X, Y_IOB2)
        free = CRF(max_iterations=20, constrained=False).fit(X, Y_IOB2)
    assert crf.get_params()["constrained"] == "auto"
    test = [_sentence(int(n)) for n in rng.integers(1, 9, 40)]
    assert all(is_well_formed(tags, "iob2") for tags in crf.predict(test))
    # the marginals sum over the well-formed sequences alone: I-PER never first
    for m in crf.predict_marginals(test):
        assert m[0]["I-PER"] == pytest.approx(0.0, abs=1e-12)
        assert sum(m[0].values()) == pytest.approx(1.0)
    assert any(m[0]["I-PER"] > 1e-6 for m in free.predict_marginals(test))
