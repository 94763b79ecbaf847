"""Transliteration discovery (LCLR §5.1): is a target-script word a transliteration of an
English word?

An example ``x`` is a word pair (source, target); its label is +1 for a transliteration
and -1 for a random pairing.  The hidden structure ``h`` is a character alignment, an int64
array ``a`` of the source's length with ``a[i] = j`` (source character i aligned to target
character j) or ``-1`` (unaligned).  Alignments are one-to-one and non-crossing (Chang et
al. 2009), so the best one is found exactly by the monotone alignment DP
(:func:`~latentstruct.inference.monotone_alignment`) on per-cell scores.

Features (LCLR §5.1: unigram and bigram character mappings).  Characters are ids of
alphabets fitted on the training words; id 0 is shared by characters never seen in
training and by the word boundary.  For an aligned cell (i, j), with ``s`` the source ids,
``t`` the target ids and ``s[-1] = s[m] = t[-1] = t[n] = 0``:

* ``U[s_i, t_j]``                          unigram mapping;
* ``BP[s_{i-1}, s_i, t_{j-1}, t_j]``        bigram mapping with the previous characters;
* ``BN[s_i, s_{i+1}, t_j, t_{j+1}]``        bigram mapping with the next characters;

and one bias feature that every structure has, so f(x) = max_h w . Phi(x, h) can be
negative.  With ``A`` and ``B`` the source and target alphabet sizes (including id 0) the
weight vector is laid out as dense blocks (row-major)::

    [ bias (1) | U (A x B) | BP (A x A x B x B) | BN (A x A x B x B) ]

``w[1]`` is the weight of one aligned cell (a feature every aligned pair fires, so the
model learns how much an alignment edge is worth by itself); ``U[s, t]`` is
``w[2 + s*B + t]``; ``BP[a, b, c, d]`` is ``w[2 + A*B + ((a*A + b)*B + c)*B + d]``; BN follows BP.  With ``bigrams=False`` the two
bigram blocks are absent.  The cell score is ``U + BP + BN`` of the cell, and
``w . Phi(x, a) = w[0] + sum of the aligned cells' scores``.

The user's character-pair scores: an in-memory example may be ``(source, target, scores)``
with an (m x n) or (m x n x k) array over the two words' characters
(:meth:`TransliterationTask.with_pair_scores`).  The weight vector then ends in a block of k
weights, a cell's score adds ``scores[i, j] . w[-k:]`` and Phi adds the aligned cells'
scores; such a model is evaluated by binary accuracy (the ranking's cross pairs have no
scores).

Modules: ``task`` (:class:`TransliterationTask`: parameters, reading, evaluation,
persistence), ``featurizer`` (:class:`~latentstruct.tasks.translit.
featurizer.TranslitFeaturizer`, the scikit-learn transformer that learns the alphabets and
encodes word pairs into a :class:`TranslitCorpus`), ``structure`` (:class:`TranslitStructure`,
the immutable structure a fitted task holds and learners see: the alphabets, the weight
layout), ``decoding`` (its alignment decoding glue, heuristic weights and ``explain``), ``corpus`` (:class:`TranslitCorpus`, featurised word
pairs), ``kernels`` (the compiled cell-score, decision and argmax kernels), ``data``
(negative sampling, scripts, ranking metrics) and ``raw`` (``make_dataset``'s word pairs).
"""

from .corpus import TranslitCorpus, concat_translit
from .data import CldrRecords, ranking_metrics, sample_negatives
from .featurizer import TranslitFeaturizer
from .structure import TranslitStructure
from .task import TransliterationTask

__all__ = [
    "TransliterationTask",
    "TranslitFeaturizer",
    "TranslitStructure",
    "CldrRecords",
    "TranslitCorpus",
    "concat_translit",
    "ranking_metrics",
    "sample_negatives",
]
