"""First-order (arc-factored) dependency parsing (``dep``): projective trees by Eisner.

A sentence's structure is its dependency tree, decoded exactly over projective trees by
:func:`latentstruct.inference.eisner.eisner` from per-arc scores.  Features are
MSTParser-style first-order arc features plus, for labelled trees, label features of each
arc (:mod:`latentstruct.tasks.dependency.features`).

**Structures.**  A tree y of an n-word sentence is an int64 array of shape (3, n)::

    y[0]  heads: y[0, m-1] is the head of word m, 0 for ROOT
    y[1]  label ids (indices into ``labels_``); -1 when unlabelled (``encode_targets``
          refuses a relation the model never saw; evaluation scores raw gold relations)
    y[2]  1 where the word is scored by UAS/LAS (``data.dependency.punctuation_mask``)

Row 2 is carried along for evaluation (decoders copy it from the featurised sentence) and
never affects scores, losses or features; (2, n) arrays of heads and labels are accepted
wherever a structure is read.

**Weight layout** (``n_features`` entries)::

    [ arc block: 2**hash_bits | label block: 2**label_hash_bits rows x n_labels
      | vector block: 6 d (only with per-token vectors of d columns) ]

The label feature of (label context hashed to row r, label l) is
``2**hash_bits + r * n_labels + l``; unlabelled tasks have no label block.
score(h, m, l) = arc(h, m) + label(h, m, l); with vectors, arc(h, m) also holds the vector
features of :mod:`latentstruct.tasks.dependency.vectors`.

**Decoding and loss.**  The first-order labelled argmax folds the best label into each arc,
s(h, m) = arc(h, m) + max_l label(h, m, l), runs Eisner on s and reads each chosen arc's
label back.  The loss counts head and label errors::

    Delta(y, y') = #{m : h'_m != h_m} + #{m : h'_m != h_m or l'_m != l_m}

(unlabelled: the first term only): the unlabelled plus the labelled attachment errors,
counted over all words, punctuation included.  It decomposes over arcs, so the
loss-augmented argmax is exact: +1 on arc h -> m when h is not m's gold head, and +1
*inside* the max for every label l when h is not the gold head or l is not the gold label,
s(h, m) = arc(h, m) + [h != h_m] + max_l (label(h, m, l) + [h != h_m or l != l_m]).
Gold trees that are not projective (2.3 % of UD EWT's training sentences) cannot be
decoded; the loss-augmented argmax returns the gold tree itself when it scores higher than
every projective tree, so it is an exact maximum over the projective trees and the gold
one (plain decoding stays projective).

Modules: ``task`` (:class:`DependencyTask`: reading, fitting, the tagger, evaluation,
persistence), ``featurizer`` (:class:`DependencyFeaturizer`: sentences to per-position
codes, gold trees to ids), ``decoding`` (``DependencyStructure``, which the task holds: the
weight layout, arc scores, Phi, loss, the Eisner argmax and k-best), ``features`` (the
compiled arc and label feature kernels), ``corpus`` (:class:`DepCorpus`, per-position
codes), ``params`` (the ``distance_bins`` parser), ``tagging`` (``UposTagger``, predicted
POS tags), ``raw`` (``make_dataset``'s in-memory sentences and trees), ``numbers`` (checks
of the numbers given beside raw examples, shared with the reranker) and ``vectors`` (the
arc features of per-token vectors).
"""

from .corpus import DepCorpus
from .decoding import DependencyStructure
from .featurizer import DependencyFeaturizer
from .task import DependencyTask, DepTarget

__all__ = ["DependencyTask", "DepTarget", "DepCorpus", "DependencyFeaturizer", "DependencyStructure"]
