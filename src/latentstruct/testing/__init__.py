"""Checks anyone adding a decoder or a task can run: decoders against brute force
(:func:`check_decoder`), tasks against the capabilities they declare (:func:`check_task`, from
:mod:`latentstruct.testing.tasks`).

Example (a chain decoder)::

    import numpy as np
    from latentstruct.inference import viterbi, all_sequences, sequence_score
    from latentstruct.testing import check_decoder

    def make_instance(rng):
        T, L = rng.integers(0, 5), rng.integers(1, 4)
        return rng.normal(size=(T, L)), rng.normal(size=(L, L))

    check_decoder(
        decode=lambda inst: viterbi(*inst),
        candidates=lambda inst: all_sequences(*inst[0].shape),
        score=lambda inst, y: sequence_score(y, *inst),
        make_instance=make_instance,
    )

The brute-force enumerators and score helpers live in
:mod:`latentstruct.inference.brute_force` and are re-exported here.

``MAX_ENUMERATED`` (100,000) is the most structures ``check_task``'s ``enumerate`` may yield
for one example; without ``enumerate`` it skips the checks against brute force
(``ENUMERATION_CHECKS``), lists them in ``report.skipped`` and warns
(``ChecksSkippedWarning``).

Modules: :mod:`.decoders` (:func:`check_decoder`), :mod:`.tasks` (:func:`check_task`, with
:mod:`.capabilities` and :mod:`.state` behind it) and :mod:`.bags` (a toy latent task for
learners' tests).
"""

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

from .bags import BagTask, make_bag_problem, require_data
from .decoders import (DecoderCheckReport, check_decoder, random_alignment_scores, random_chain,
                       random_scores, random_tree, random_tree_instance, scores_close)
from .tasks import (ENUMERATION_CHECKS, MAX_ENUMERATED, ChecksSkippedWarning, TaskCheckReport,
                    check_task)

__all__ = [
    "require_data",
    "BagTask",
    "make_bag_problem",
    "check_decoder",
    "DecoderCheckReport",
    "check_task",
    "TaskCheckReport",
    "ChecksSkippedWarning",
    "MAX_ENUMERATED",
    "ENUMERATION_CHECKS",
    "scores_close",
    "random_scores",
    "random_chain",
    "random_alignment_scores",
    "random_tree",
    "random_tree_instance",
    "brute_force",
    "all_sequences",
    "all_labelings",
    "all_alignments",
    "all_binary_vectors",
    "sequence_score",
    "alignment_score",
    "tree_score",
    "brute_force_log_partition",
]
