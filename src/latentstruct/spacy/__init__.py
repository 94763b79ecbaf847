"""latentstruct models as spaCy pipeline components, trainable by ``spacy train``.

Four factories, registered through the ``spacy_factories`` entry point (so
``nlp.add_pipe("latentstruct_tagger")`` works once latentstruct is installed, with no import)::

    latentstruct_tagger    writes token.pos_ or token.tag_ (``attr``)
    latentstruct_chunker   writes doc.spans["chunks"] (``spans_key``), and doc.ents when the
                           chunk types are entity types (``ents``)
    latentstruct_parser    writes token.head and token.dep_
    latentstruct_crf       a latentstruct.crfsuite model with the user's feature function
                           (named in spaCy's registry): token.tag_, token.pos_ or doc.ents

The first three take ``model``, the path of a latentstruct model file (``latentstruct
train``, or an estimator's ``save``), or ``""`` for a component to train (``initialize`` then ``update``:
one ``partial_fit`` pass of an online learner per batch).  ``use_tensor`` feeds the
pipeline's ``doc.tensor`` as numeric features beside the words (None: as the model was
trained).  ``nlp.to_disk`` stores the model file in the component's folder (never pickle),
and ``spacy.load`` reads it from there.

Importing this package imports spaCy (``import latentstruct`` does not import it).
"""

from __future__ import annotations

try:
    import spacy  # noqa: F401
except ImportError as exc:  # pragma: no cover - the nlp extra is missing
    raise ImportError("latentstruct.spacy needs spaCy: pip install 'latentstruct[nlp]' (or "
                      "'spacy>=3.7')") from exc

from .components import (
    LatentstructChunker,
    LatentstructParser,
    LatentstructTagger,
    make_chunker,
    make_parser,
    make_tagger,
)
from .crf import LatentstructCRF, make_crf

__all__ = ["LatentstructTagger", "LatentstructChunker", "LatentstructParser", "LatentstructCRF",
           "make_tagger", "make_chunker", "make_parser", "make_crf"]
