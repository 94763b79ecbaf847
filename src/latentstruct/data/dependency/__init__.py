"""Dependency data: treebanks (CoNLL-U and PTB ``.dp``) and k-best lists of trees.

Modules: ``trees`` (:class:`DependencySentence`, reading CoNLL-U and ``.dp`` files, writing
CoNLL-U, tree checks, the scored-token mask), ``kbest`` (the k-best list file of the
reranker: header, sentences, candidates, reader and writer) and ``kbest_synthetic``
(synthetic k-best lists for tests and benchmarks).
"""

from latentstruct.data.dependency.kbest import (
    KBEST_FORMAT,
    KBEST_VERSION,
    KBestCandidate,
    KBestHeader,
    KBestSentence,
    read_kbest,
    write_kbest,
)
from latentstruct.data.dependency.trees import (
    PTB_PUNCTUATION_TAGS,
    PTB_SPLITS,
    UD_PUNCTUATION_UPOS,
    DependencySentence,
    check_tree,
    dp_documents,
    punctuation_mask,
    read_dependencies,
    write_dependencies,
)

__all__ = [
    "DependencySentence",
    "read_dependencies",
    "write_dependencies",
    "punctuation_mask",
    "check_tree",
    "dp_documents",
    "PTB_PUNCTUATION_TAGS",
    "PTB_SPLITS",
    "UD_PUNCTUATION_UPOS",
    "KBEST_FORMAT",
    "KBEST_VERSION",
    "KBestHeader",
    "KBestCandidate",
    "KBestSentence",
    "read_kbest",
    "write_kbest",
]
