"""spaCy's binary corpora (``.spacy`` files, ``DocBin``): the sentences they hold as the
records of the CoNLL-U and CoNLL-2000 readers.

``python -m spacy convert`` writes these files from CoNLL-U (``-c conllu``, the default for
``.conllu``) and from CoNLL-2000-style ``word POS chunk-tag`` columns (``-c ner``: the chunks
become ``doc.ents``, the POS tags ``token.tag_``).  :func:`read_docbin_conllu` returns one
:class:`~latentstruct.data.readers.conllu.ConlluSentence` per sentence (``doc.sents`` where
the file marks sentence starts, else one per ``Doc``) with every annotation the file has:
lemma, UPOS (``token.pos_``), XPOS (``token.tag_``), FEATS (``token.morph``), HEAD and
DEPREL; an annotation the file lacks is ``_``.  :func:`read_docbin_chunks` returns one
:class:`~latentstruct.data.readers.conll2000.ChunkSentence` per sentence: words,
``token.tag_`` as the POS, and IOB chunk tags from ``doc.spans["chunks"]`` (what the
``latentstruct_chunker`` spaCy component writes) or else from ``doc.ents``.

spaCy is imported only when such a file is read (``pip install 'latentstruct[nlp]'``).  The
file is checked before spaCy parses it: at most :data:`MAX_DOCBIN_BYTES` once decompressed
(a small file can inflate a thousandfold), and anything spaCy cannot load is one
``InputError`` naming the file.  Errors in the content name the document, sentence and token
(``doc 3, sentence 2, token 5``), since a binary file has no lines.  Nothing in the file is
executed: a DocBin is msgpack data, and ``user_data`` is not read.
"""

from __future__ import annotations

import os
import zlib

from latentstruct.data.readers.conll2000 import ChunkSentence, is_chunk_tag
from latentstruct.data.readers.conllu import ConlluSentence, is_upos_tag
from latentstruct.data.readers.lines import excerpt
from latentstruct.exceptions import InputError

__all__ = ["DOCBIN_SUFFIX", "MAX_DOCBIN_BYTES", "is_docbin_path", "read_docbin_conllu",
           "read_docbin_chunks"]

#: the suffix spaCy gives its binary corpora (``spacy convert``, ``--paths.train``)
DOCBIN_SUFFIX = ".spacy"
#: the most bytes a ``.spacy`` file may inflate to (1 GiB; EWT's training set is 13 MB)
MAX_DOCBIN_BYTES = 1 << 30
_CHUNK_GROUP = "chunks"


def is_docbin_path(path) -> bool:
    """Whether ``path`` names a spaCy ``DocBin`` file, by spaCy's ``.spacy`` suffix."""
    return os.fspath(path).lower().endswith(DOCBIN_SUFFIX)


def _load_docs(path) -> list:
    """The ``Doc`` objects of a ``.spacy`` file, after checking its inflated size."""
    name = os.fspath(path)
    try:
        from spacy.tokens import DocBin
        from spacy.vocab import Vocab
    except ImportError:
        raise InputError("reading spaCy's .spacy files needs spaCy; install it with "
                         "pip install 'latentstruct[nlp]', or give CoNLL-U / CoNLL-2000 text",
                         name) from None
    try:
        with open(name, "rb") as fh:
            data = fh.read()
    except IsADirectoryError:
        raise InputError("is a directory; expected a .spacy file (a spaCy DocBin)", name) from None
    inflate = zlib.decompressobj()
    size = 0
    try:
        chunk = inflate.decompress(data, 1 << 20)
        while chunk:
            size += len(chunk)
            if size > MAX_DOCBIN_BYTES:
                raise InputError(
                    f"inflates past the limit of {MAX_DOCBIN_BYTES:,} bytes for a .spacy file; "
                    "split the corpus into smaller DocBin files", name)
            chunk = inflate.decompress(inflate.unconsumed_tail, 1 << 20)
    except zlib.error as exc:
        raise InputError(
            f"is not a spaCy DocBin (its bytes are not zlib data: {exc}); expected a .spacy "
            "file as 'python -m spacy convert' or DocBin.to_disk writes", name) from None
    try:
        docbin = DocBin(store_user_data=False).from_bytes(data)
        return list(docbin.get_docs(Vocab()))
    except Exception as exc:  # spaCy raises KeyError, ValueError, TypeError ... on bad data
        raise InputError(
            f"is not a readable spaCy DocBin ({type(exc).__name__}: {excerpt(str(exc))}); "
            "expected a .spacy file as 'python -m spacy convert' or DocBin.to_disk writes",
            name) from None


def _sentences(doc) -> list:
    """The sentences of ``doc``: ``doc.sents`` where the file marks sentence starts (or has
    a parse), else the whole ``Doc``."""
    if len(doc) and (doc.has_annotation("SENT_START") or doc.has_annotation("DEP")):
        return list(doc.sents)
    return [doc[:]] if len(doc) else []


def _check_words(span, where: str, name: str) -> None:
    for k, token in enumerate(span):
        text = token.text
        if not text or any(ch.isspace() for ch in text):
            raise InputError(
                f"{where}, token {k + 1} is {excerpt(text)}: a word with whitespace (spaCy's "
                "whitespace tokens, as nlp() makes from double spaces or newlines) has no place "
                "in a tagged sentence; remove them before saving the DocBin", name)


def _feats(morph) -> str:
    """FEATS as UD orders them (by name, case-insensitively; spaCy sorts case-sensitively)."""
    text = str(morph)
    return "|".join(sorted(text.split("|"), key=str.lower)) if text else "_"


def read_docbin_conllu(path) -> list[ConlluSentence]:
    """The sentences of a ``.spacy`` file as CoNLL-U records (see the module doc).

    UPOS (``token.pos_``) must be a Universal POS tag or unset; HEAD is 0 for a sentence's
    root, and DEPREL ``ROOT`` (spaCy's name) is written ``root`` (UD's).  The records'
    ``line`` is 0: locations in messages are ``doc D, sentence S, token K``.
    """
    name = os.fspath(path)
    out: list[ConlluSentence] = []
    for d, doc in enumerate(_load_docs(path), 1):
        parsed = doc.has_annotation("DEP")
        for s, sent in enumerate(_sentences(doc), 1):
            where = f"doc {d}, sentence {s}"
            _check_words(sent, where, name)
            rows = []
            for k, tok in enumerate(sent):
                upos = tok.pos_ or "_"
                if not is_upos_tag(upos):
                    raise InputError(
                        f"{where}, token {k + 1} ({excerpt(tok.text)}) has token.pos_ "
                        f"{excerpt(upos)}, not a Universal POS tag; UPOS holds the 17 UD tags "
                        "(language-specific tags belong in token.tag_)", name)
                if parsed and tok.dep_:
                    head = "0" if tok.head.i == tok.i else str(tok.head.i - sent.start + 1)
                    dep = "root" if tok.dep_ == "ROOT" else tok.dep_
                else:
                    head, dep = "_", "_"
                misc = "_" if tok.whitespace_ or k == len(sent) - 1 else "SpaceAfter=No"
                rows.append((str(k + 1), tok.text, tok.lemma_ or "_", upos, tok.tag_ or "_",
                             _feats(tok.morph), head, dep, "_", misc))
            out.append(ConlluSentence(tuple(rows)))
    if not out:
        raise InputError("holds no sentences (no Doc with tokens)", name)
    return out


def _chunk_tags(doc) -> list[str] | None:
    """IOB chunk tags of every token of ``doc``, None where the file annotates no chunks:
    from the span group ``chunks`` (tokens outside its spans are ``O``) or else from the
    entity annotation (a token whose entity tag is missing is ``_``, unknown)."""
    if _CHUNK_GROUP in doc.spans:
        tags = ["O"] * len(doc)
        for span in doc.spans[_CHUNK_GROUP]:
            for i in range(span.start, span.end):
                tags[i] = ("B-" if i == span.start else "I-") + span.label_
        return tags
    if not doc.has_annotation("ENT_IOB"):
        return None
    return [f"{tok.ent_iob_}-{tok.ent_type_}" if tok.ent_iob_ in ("B", "I")
            else (tok.ent_iob_ or "_") for tok in doc]


def read_docbin_chunks(path, *, need_tags: bool) -> list[ChunkSentence]:
    """The sentences of a ``.spacy`` file as CoNLL-2000 records (see the module doc).

    Chunk tags come from ``doc.spans["chunks"]`` or, without that group, ``doc.ents``;
    a file with neither has no tags, which is an error when ``need_tags`` (training and
    evaluation) and gives ``'_'`` tags otherwise.  Every word needs a POS tag in
    ``token.tag_`` (the chunker's features read it).
    """
    name = os.fspath(path)
    out: list[ChunkSentence] = []
    for d, doc in enumerate(_load_docs(path), 1):
        tags = _chunk_tags(doc)
        if tags is None:
            if need_tags:
                raise InputError(
                    f"doc {d} has no chunks: neither doc.spans['chunks'] nor entities (doc.ents) "
                    "are set; convert CoNLL-2000 'word POS chunk-tag' columns with 'python -m "
                    "spacy convert FILE DIR -c ner', which stores the chunks as entities", name)
            tags = ["_"] * len(doc)
        for s, sent in enumerate(_sentences(doc), 1):
            where = f"doc {d}, sentence {s}"
            _check_words(sent, where, name)
            pos = [tok.tag_ for tok in sent]
            if not all(pos):
                k = pos.index("")
                raise InputError(
                    f"{where}, token {k + 1} ({excerpt(sent[k].text)}) has no POS tag in "
                    "token.tag_; the chunker's features need the POS of every word (CoNLL-2000's "
                    "second column, which 'spacy convert -c ner' keeps)", name)
            sent_tags = tags[sent.start:sent.end]
            if sent_tags and sent_tags[0].startswith("I-"):
                # a chunk across a sentence start: the sentence's part begins it
                sent_tags[0] = "B-" + sent_tags[0][2:]
            bad = next((t for t in sent_tags if t != "_" and not is_chunk_tag(t)), None)
            if bad is not None:
                raise InputError(
                    f"{where}: the chunk label gives the tag {excerpt(bad)}, not an IOB chunk "
                    "tag; chunk labels must be single words without spaces (NP, VP, ...)", name)
            out.append(ChunkSentence(tuple(t.text for t in sent), tuple(pos), tuple(sent_tags)))
    if not out:
        raise InputError("holds no sentences (no Doc with tokens)", name)
    return out
