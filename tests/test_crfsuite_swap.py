"""sklearn-crfsuite's documented CoNLL workflow, run side by side on ``sklearn_crfsuite.CRF``
and on ``latentstruct.Tagger``: the same feature function, the same lists of per-token
feature dicts, the same metric.  Swapping the estimator is the only change.

The workflow is the one of sklearn-crfsuite's tutorial (``word2features`` on CoNLL data, a
CRF with L-BFGS, c1 = c2 = 0.1, 100 iterations, ``all_possible_transitions=True``, scored
by ``metrics.flat_f1_score(..., average="weighted")`` over the labels other than ``O``),
on CoNLL-2000 chunking: the first 3,000 sentences of ``conll2000/train.txt`` train, the
last 1,000 test (the official test file is not in ``../shared/data``).
"""

from __future__ import annotations

import pytest

sklearn_crfsuite = pytest.importorskip(
    "sklearn_crfsuite", reason="sklearn-crfsuite is a test dependency: pip install -e '.[test]'")


def word2features(sent, i):
    """The tutorial's feature function, verbatim but for the variable names."""
    word, postag = sent[i][0], sent[i][1]
    features = {
        "bias": 1.0,
        "word.lower()": word.lower(),
        "word[-3:]": word[-3:],
        "word[-2:]": word[-2:],
        "word.isupper()": word.isupper(),
        "word.istitle()": word.istitle(),
        "word.isdigit()": word.isdigit(),
        "postag": postag,
        "postag[:2]": postag[:2],
    }
    if i > 0:
        word1, postag1 = sent[i - 1][0], sent[i - 1][1]
        features.update({
            "-1:word.lower()": word1.lower(),
            "-1:word.istitle()": word1.istitle(),
            "-1:word.isupper()": word1.isupper(),
            "-1:postag": postag1,
            "-1:postag[:2]": postag1[:2],
        })
    else:
        features["BOS"] = True
    if i < len(sent) - 1:
        word1, postag1 = sent[i + 1][0], sent[i + 1][1]
        features.update({
            "+1:word.lower()": word1.lower(),
            "+1:word.istitle()": word1.istitle(),
            "+1:word.isupper()": word1.isupper(),
            "+1:postag": postag1,
            "+1:postag[:2]": postag1[:2],
        })
    else:
        features["EOS"] = True
    return features


def sent2features(sent):
    return [word2features(sent, i) for i in range(len(sent))]


def sent2labels(sent):
    return [label for _, _, label in sent]


def run_workflow(crf, train_sents, test_sents):
    """The tutorial's steps; ``crf`` is the only thing that differs between the two runs."""
    from sklearn_crfsuite import metrics

    X_train = [sent2features(s) for s in train_sents]
    y_train = [sent2labels(s) for s in train_sents]
    X_test = [sent2features(s) for s in test_sents]
    y_test = [sent2labels(s) for s in test_sents]
    crf.fit(X_train, y_train)
    labels = list(crf.classes_)
    labels.remove("O")
    y_pred = crf.predict(X_test)
    return metrics.flat_f1_score(y_test, y_pred, average="weighted", labels=labels), y_test, y_pred


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.UndefinedMetricWarning")
def test_tagger_is_a_drop_in_for_sklearn_crfsuite(require_data, capsys):
    from latentstruct import Tagger
    from latentstruct.data.readers import read_conll2000
    from latentstruct.tasks.sequence.chunk_metrics import chunk_f1

    sents = [list(zip(s.words, s.pos, s.tags))
             for s in read_conll2000(require_data("conll2000", "train.txt"))]
    train, test = sents[:3000], sents[-1000:]

    theirs, y_test, their_pred = run_workflow(
        sklearn_crfsuite.CRF(algorithm="lbfgs", c1=0.1, c2=0.1, max_iterations=100,
                             all_possible_transitions=True), train, test)
    ours, _, our_pred = run_workflow(Tagger(), train, test)

    their_chunk = chunk_f1(y_test, [list(p) for p in their_pred])["f1"]
    our_chunk = chunk_f1(y_test, our_pred)["f1"]
    with capsys.disabled():
        print(f"\nsklearn-crfsuite swap, CoNLL-2000 (3,000 train / 1,000 test sentences): "
              f"flat weighted F1 crfsuite {theirs:.4f}, latentstruct {ours:.4f}; "
              f"conlleval chunk F1 crfsuite {their_chunk:.4f}, latentstruct {our_chunk:.4f}")
    assert theirs > 0.85  # the workflow itself works
    assert abs(ours - theirs) <= 0.01, (ours, theirs)
