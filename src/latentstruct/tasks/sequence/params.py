"""The sequence tasks' parameter declarations (``latentstruct.params``).

:data:`FEATURE_PARAMETERS` are what :class:`~latentstruct.tasks.sequence.featurizer.ChainFeaturizer`
takes (the attribute index and the templates; the tasks take them by name and check them
by this declaration, ``tasks.base.featurizer_param_defaults``), :data:`SAMPLING_PARAMETERS`
the J-LIS S/B sampling options of :class:`~latentstruct.tasks.sequence.SequenceLabellingTask`;
each task class joins them with its own (``tag_column``, ``input_scheme``).
"""

from __future__ import annotations

from ...limits import AFFIX_LENGTH, NEGATIVES_PER_POSITIVE, WINDOW, Bound
from ...params import Interval, Options, bounded

__all__ = ["MAX_HASH_BITS", "HASH_BITS", "FEATURE_PARAMETERS", "SAMPLING_PARAMETERS"]

#: Largest ``hash_bits`` of the sequence tasks.  With feature hashing the emission block
#: holds 2**hash_bits weights per label (float64): 512 MiB per label at 26, so a 23-label
#: chunker needs 11.5 GiB; at 32 a POS tagger would ask for hundreds of GiB.
MAX_HASH_BITS = 26


def _bytes(n: int) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:,.0f} {unit}"
        n /= 1024


def _per_label(bits: int) -> str:
    """The size of one label's 2**bits float64 weights (never computed exactly for a huge
    ``bits``: ``8 << 10**9`` alone would take 125 MB)."""
    return (f"{_bytes(8 << int(bits))} per label" if bits <= 80
            else f"2**{bits + 3:,} bytes per label")


#: ``hash_bits``: a refusal over the limit says what the weights of one label would take
HASH_BITS = Bound(
    MAX_HASH_BITS, "with feature hashing the model holds 2**hash_bits weights per label, "
                   "8 bytes each", _per_label, "memory")

#: the attribute index and the templates (the featurizer's parameters, but ``uses_pos``)
FEATURE_PARAMETERS = {
    "min_count": [Interval(int, 1)],
    "feature_index": [Options("index", "hashing")],
    "hash_bits": [bounded(HASH_BITS)],
    "window": [bounded(WINDOW)],
    "affix_length": [bounded(AFFIX_LENGTH)],
    "attribute_order": [Options("frequency", "first_seen")],
}

#: J-LIS's S/B sample of the training sentences (``training_sample``)
SAMPLING_PARAMETERS = {
    "n_structured_tokens": [Interval(int, 0), None],
    "n_binary": [Interval(int, 0)],
    "negatives_per_positive": [bounded(NEGATIVES_PER_POSITIVE)],
    "sample_seed": [Interval(int, 0)],
}
