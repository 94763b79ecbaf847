"""The training data of the supervised chunker whose weights are the grammaticality task's
heuristic weights (Clifton et al. 2013, section 4).

:func:`chunker_examples` reads the first sentences of a CoNLL-2000 file and writes each
gold chunking in every view's encoding.  The task tags and featurises those sentences
(``GrammaticalityTask.chunk_training_data``); the problem they train is the structure's
``chunking_task()`` (a :class:`~latentstruct.tasks.grammaticality.ChunkingView`), and
:func:`latentstruct.pipelines.train_chunker` trains it and attaches the weights with
``set_chunker_weights``.
"""

from __future__ import annotations

from ...data.readers import read_conll2000
from ...exceptions import InputError
from .sentences import Sentence

__all__ = ["chunker_examples"]


def chunker_examples(structure, path, n_sentences: int) -> tuple[list[Sentence], list]:
    """``(records, gold)``: the first ``n_sentences`` sentences of the CoNLL-2000 file
    ``path`` as :class:`Sentence` records (words only, to be tagged), and their gold
    chunkings written in every view of the fitted ``structure`` (a ``ViewsStructure``) as
    int arrays (n_views, T).  ``InputError`` (file:line) for a chunk type outside the
    structure's ``chunk_types_``, or for a file without sentences."""
    sents = read_conll2000(path)[: int(n_sentences)]
    known = set(structure.chunk_types_)
    records, gold = [], []
    for s in sents:
        types = {t[2:] for t in s.tags if t != "O"}
        if not types <= known:
            raise InputError(
                f"chunk types {sorted(types - known)} are not among chunk_types "
                f"{sorted(known)}", str(path), s.line)
        records.append(Sentence(s.words))
        gold.append(structure.encode_chunking(s.tags))
    if not records:
        raise InputError("the chunker corpus contains no sentences", str(path))
    return records, gold
