"""English news sentences from Reuters-21578, built from the original SGML files.

The 22 files ``reut2-000.sgm`` ... ``reut2-021.sgm`` are downloaded (each checked against
its SHA-256) and turned into one sentence per line by the recipe of the corpus's README:

1. the ``<BODY>`` of every article whose ``LEWISSPLIT`` is ``TRAIN`` or ``NOT-USED`` (the
   ``TEST`` articles are held out), without the trailing "Reuter" sign-off and ``&#3;``,
   SGML entities unescaped; paragraphs (indented lines) kept apart, line wraps joined;
2. sentences by spaCy's statistical sentence segmenter (``senter`` of the English
   pipeline), paragraph by paragraph;
3. company markup removed: tickers such as ``<NFDS.L>`` deleted, ``<Company Name>`` made
   ``Company Name``;
4. sentence-like lines kept (:func:`keep`), exact duplicates dropped (first kept).

The segmenter is a statistical model, so the result depends on the pipeline's version: it is
not checked against a digest, and with another spaCy pipeline than the one the shared copy
was made with (``en_core_web_sm`` 3.8.0) a small share of lines differ.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from latentstruct.data.atomic import atomic_write

from .download import FetchError, TemporaryFolder, download
from .registry import REUTERS_BASE, REUTERS_SGML

__all__ = ["articles", "paragraphs", "clean_markup", "keep", "build_sentences"]

_ARTICLE = re.compile(r"<REUTERS\b([^>]*)>(.*?)</REUTERS>", re.S)
_SPLIT = re.compile(r'LEWISSPLIT="([A-Z-]+)"')
_BODY = re.compile(r"<BODY>(.*?)</BODY>", re.S)
_SIGN_OFF = re.compile(r"\s*Reuter\s*(&#3;)?\s*$")
_TICKER = re.compile(r"\s*<[A-Z0-9]{1,6}(\.[A-Z]{1,2})?>")
_COMPANY = re.compile(r"<([^<>]+)>")
_START = re.compile(r"""^["'(]?[A-Z0-9]""")
_END = re.compile(r"""[.!?]["')]?$""")
_FORBIDDEN = re.compile(r"[<>\[\]{}|#@*_=~^]|\.\.")
_EARNINGS = re.compile(r"\b(cts|dlrs)\s+vs\b")
_WORD = re.compile(r"""^["'(]*[A-Za-z][A-Za-z'.-]*[,;:"')!?.]*$""")


def articles(sgml: str):
    """The body texts of the TRAIN and NOT-USED articles of one SGML file, in order."""
    for attributes, inner in _ARTICLE.findall(sgml):
        split = _SPLIT.search(attributes)
        if split is None or split.group(1) not in ("TRAIN", "NOT-USED"):
            continue
        body = _BODY.search(inner)
        if body is not None:
            yield body.group(1)


def paragraphs(body: str) -> list[str]:
    """A body's paragraphs: an indented line starts one, wrapped lines are joined."""
    text = _SIGN_OFF.sub("", body.replace("&#3;", ""))
    text = html.unescape(text)
    out, current = [], []
    for line in text.split("\n"):
        if line.startswith((" ", "\t")) and current:
            out.append(" ".join(current))
            current = []
        if line.strip():
            current.append(line.strip())
    if current:
        out.append(" ".join(current))
    return [" ".join(p.split()) for p in out]


def clean_markup(sentence: str) -> str:
    """Tickers ``<NFDS.L>`` deleted, ``<Company Name>`` made ``Company Name``."""
    sentence = _TICKER.sub("", sentence)
    sentence = _COMPANY.sub(r"\1", sentence)
    return " ".join(sentence.split())


def keep(sentence: str) -> bool:
    """The README's filter of sentence-like lines."""
    tokens = sentence.split()
    if not 4 <= len(tokens) <= 60 or not sentence.isascii():
        return False
    if not _START.match(sentence) or not _END.search(sentence) or _FORBIDDEN.search(sentence):
        return False
    letters = [c for c in sentence if c.isalpha()]
    if not letters or sum(c.isupper() for c in letters) > 0.3 * len(letters):
        return False
    wordlike = sum(bool(_WORD.match(t)) for t in tokens)
    lowercase = sum(t.strip("\"'(),.;:!?").islower() for t in tokens)
    if wordlike < 0.6 * len(tokens) or lowercase < 2:
        return False
    return not _EARNINGS.search(sentence)


def _segmenter():
    from latentstruct.data.nlp import resolve_pipeline

    try:
        import spacy

        name = resolve_pipeline("en_core_web_sm").target
        nlp = spacy.load(name, exclude=["parser", "ner", "lemmatizer", "attribute_ruler",
                                        "tagger", "tok2vec"])
        nlp.enable_pipe("senter")
    except Exception as exc:  # noqa: BLE001 - any failure to load is the same advice
        raise FetchError(f"building the Reuters sentences needs spaCy and its English "
                         f"pipeline ({type(exc).__name__}: {exc}); pip install "
                         f"'latentstruct[nlp]'") from None
    return nlp


def sentences_of(sgml_texts, nlp) -> list[str]:
    seen, out = set(), []
    for sgml in sgml_texts:
        paras = [p for body in articles(sgml) for p in paragraphs(body)]
        for doc in nlp.pipe(paras, batch_size=256):
            for sent in doc.sents:
                line = clean_markup(sent.text)
                if keep(line) and line not in seen:
                    seen.add(line)
                    out.append(line)
    return out


def build_sentences(destination: Path, spec) -> None:
    nlp = _segmenter()
    with TemporaryFolder(destination.parent) as folder:
        texts = []
        for name, digest in REUTERS_SGML:
            path = download(f"{REUTERS_BASE}/{name}", folder, sha256=digest, desc=name,
                            name=name)
            # one byte of reut2-017.sgm is not ASCII; Latin-1 reads every byte
            texts.append(path.read_text(encoding="latin-1"))
    lines = sentences_of(texts, nlp)
    if not lines:
        raise FetchError("no sentence survived the Reuters recipe; nothing was written")
    with atomic_write(destination, "w", encoding="ascii") as handle:
        handle.write("\n".join(lines) + "\n")
