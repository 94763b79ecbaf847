"""Data layer: sparse feature vectors, feature indices, corpus readers, paths, atomic writes."""

from latentstruct.data.atomic import atomic_write
from latentstruct.data.features import (
    FEATURE_INDEX_KINDS,
    BaseFeatureIndex,
    FeatureIndex,
    HashingIndex,
    feature_index_from_arrays,
    make_feature_index,
)
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
    "atomic_write",
    "data_root",
    "dataset_path",
    "dataset_available",
    "missing_data_message",
]
