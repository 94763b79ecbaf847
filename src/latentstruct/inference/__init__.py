"""Exact argmax (and marginals) over constrained structures; never sees features.

Each decoder maximises a sum of part scores and returns a
:class:`~latentstruct.inference.result.DecodeResult`.  Use the cheapest exact solver the
constraint structure allows: chains -> :func:`viterbi`; monotone one-to-one alignments ->
:func:`monotone_alignment`; one-to-one alignments -> :func:`bipartite_matching`; trees ->
:func:`tree_max_product` / :func:`tree_sum_product`; graph alignment with edge mappings (LCLR §4)
-> :class:`GraphAlignmentILP`; anything else -> :class:`ILPModel`.  Hard constraints on a
chain's labellings (forbidden transitions, first or last labels, allowed labels per token)
are :class:`ChainConstraints` (and :func:`token_mask`): ``-inf`` part scores, so the chain's
decoders, k-best and sums stay exact over the allowed labellings.  Constraints on the whole
labelling (a label's count, if-then, a contiguous field) are :class:`GlobalConstraints`,
decoded exactly by :func:`constrained_argmax` (k-best Viterbi first, then the ILP).
"""

from latentstruct.inference.alignment import alignment_to_indicator, indicator_to_alignment, monotone_alignment
from latentstruct.inference.brute_force import (
    all_alignments,
    all_binary_vectors,
    all_labelings,
    all_sequences,
    alignment_score,
    brute_force,
    brute_force_log_partition,
    sequence_score,
    tree_score,
)
from latentstruct.inference.graph_alignment import (
    GraphAlignment,
    GraphAlignmentILP,
    GraphAlignmentProblem,
    GraphPartScores,
    check_alignment,
    enumerate_alignments,
)
from latentstruct.inference.graph_alignment import alignment_score as graph_alignment_score
from latentstruct.inference.ilp import AlignmentILP, ILPModel, SequenceILP, TreeILP
from latentstruct.inference.loss import (
    AlignmentAugmentation,
    alignment_hamming_augment,
    alignment_hamming_loss,
    hamming_augment,
    hamming_loss,
)
from latentstruct.inference.matching import bipartite_matching
from latentstruct.inference.result import ERROR, EXACT, INFEASIBLE, TIME_LIMIT, DecodeResult
from latentstruct.inference.tree_bp import TreeMarginals, tree_max_product, tree_sum_product
from latentstruct.inference.viterbi import BatchViterbiResult, kbest_viterbi, viterbi, viterbi_batch
from latentstruct.inference.constraints import ChainConstraints, token_mask
from latentstruct.inference.global_constraints import GlobalConstraints, constrained_argmax
from latentstruct.inference.eisner import KBestTrees, eisner, eisner_batch, eisner_kbest, head_hamming_augmented
from latentstruct.inference.brute_force import (
    all_dependency_trees,
    brute_force_dependency,
    dependency_score,
    projective_trees,
)

__all__ = [
    "DecodeResult",
    "EXACT",
    "TIME_LIMIT",
    "INFEASIBLE",
    "ERROR",
    "viterbi",
    "viterbi_batch",
    "kbest_viterbi",
    "BatchViterbiResult",
    "ChainConstraints",
    "token_mask",
    "GlobalConstraints",
    "constrained_argmax",
    "monotone_alignment",
    "alignment_to_indicator",
    "indicator_to_alignment",
    "bipartite_matching",
    "tree_max_product",
    "tree_sum_product",
    "TreeMarginals",
    "ILPModel",
    "SequenceILP",
    "AlignmentILP",
    "TreeILP",
    "GraphAlignmentProblem",
    "GraphPartScores",
    "GraphAlignment",
    "GraphAlignmentILP",
    "check_alignment",
    "enumerate_alignments",
    "graph_alignment_score",
    "hamming_augment",
    "hamming_loss",
    "alignment_hamming_augment",
    "alignment_hamming_loss",
    "AlignmentAugmentation",
    "brute_force",
    "all_sequences",
    "all_labelings",
    "all_alignments",
    "all_binary_vectors",
    "sequence_score",
    "alignment_score",
    "tree_score",
    "brute_force_log_partition",
    "eisner",
    "eisner_kbest",
    "eisner_batch",
    "head_hamming_augmented",
    "KBestTrees",
    "projective_trees",
    "all_dependency_trees",
    "dependency_score",
    "brute_force_dependency",
]
