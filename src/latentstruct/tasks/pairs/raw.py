"""In-memory data of the paraphrase and RTE tasks: the body of ``make_dataset``.

``X`` is a list of sentence pairs, each a 2-tuple (or 2-list) of strings; ``y`` a list of
binary labels (+1/-1, 1/0 or True/False; see
:func:`~latentstruct.tasks.validation.raw_binary_labels`) or None.  Every sentence goes
through the file readers' check (:func:`latentstruct.data.pairs.pair_sentence`), located as
``X[i][k]`` instead of ``file:line``; an example may carry the user's word-pair scores as
a third element, ``(a, b, scores)`` (:mod:`latentstruct.tasks.pairs.scores`); the records are the readers' ``SentencePair``, so
``fit``, ``featurize`` and ``evaluate`` are unchanged.  Unlike the readers, nothing is
sampled, split or deduplicated: the dataset holds exactly the given pairs, in order.
"""

from __future__ import annotations

from ...data.pairs import SentencePair, pair_sentence
from ..base import Dataset
from ..validation import raw_binary_targets, raw_examples, raw_pair, raw_string
from .scores import ScoredSentencePair, check_pair_scores, n_scores

__all__ = ["sentence_pair_dataset"]


def sentence_pair_dataset(X, y=None, *, names=("text_a", "text_b")) -> Dataset:
    """``GraphPairTask.make_dataset``: one :class:`~latentstruct.data.pairs.SentencePair` per
    pair (id ``str(i)``, the sentences stripped, label 1/0 or None, line 0) and labels +-1
    (or None each without ``y``).  ``names`` name the two sentences in messages."""
    X, y = raw_examples(X, y, example=f"({names[0]}, {names[1]}) pair")
    labels = raw_binary_targets(y, len(X))
    records = []
    for i, x in enumerate(X):
        scores = None
        if isinstance(x, (tuple, list)) and len(x) == 3:
            scores = check_pair_scores(x[2], i)
            x = tuple(x[:2])
        pair = raw_pair(x, i, f"({names[0]}, {names[1]}) pair")
        first, second = (
            pair_sentence(raw_string(s, i, f"the {name}", at=f"[{k}]"), f"the {name}",
                          f"X[{i}][{k}]")
            for k, (s, name) in enumerate(zip(pair, names)))
        label = None if y is None else int(labels[i] > 0)
        if scores is None:
            records.append(SentencePair(str(i), first, second, label, 0))
        else:
            records.append(ScoredSentencePair(str(i), first, second, label, 0, scores))
    n_scores(records)  # all or none, one k
    return Dataset(records, labels)
