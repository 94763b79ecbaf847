"""Data layer: sparse feature vectors, feature indices, corpus readers, paths, atomic writes."""

from latentstruct.data.atomic import atomic_write
from latentstruct.data.crfsuite_file import CRFsuiteModel, read_crfsuite_model
from latentstruct.data.paths import (
    data_root,
    dataset_available,
    dataset_path,
    missing_data_message,
)
from latentstruct.data.readers import (
    ChunkSentence,
    ConlluSentence,
    read_conll2000,
    read_conllu,
    read_lines,
    write_conll2000,
    write_conllu,
)
from latentstruct.data.sparse import SparseVector, coalesce_arrays, concat

__all__ = [
    "SparseVector",
    "concat",
    "coalesce_arrays",
    "BaseFeatureIndex",
    "FeatureIndex",
    "HashingIndex",
    "FEATURE_INDEX_KINDS",
    "make_feature_index",
    "feature_index_from_arrays",
    "read_lines",
    "ChunkSentence",
    "read_conll2000",
    "write_conll2000",
    "ConlluSentence",
    "read_conllu",
    "write_conllu",
    "CRFsuiteModel",
    "read_crfsuite_model",
    "atomic_write",
    "data_root",
    "dataset_path",
    "dataset_available",
    "missing_data_message",
]

# The feature indices import scikit-learn (a second of start-up): loaded on first use, so
# a command that refuses its paths (``latentstruct.data.path_rule``) answers at once.
_FEATURES = frozenset(("FEATURE_INDEX_KINDS", "BaseFeatureIndex", "FeatureIndex", "HashingIndex",
                       "feature_index_from_arrays", "make_feature_index"))


def __getattr__(name):
    if name in _FEATURES:
        from latentstruct.data import features

        return getattr(features, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
