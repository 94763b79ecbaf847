"""Citation field extraction on Cora (J-LIS §4.3): label every token with its field.

The model is the first-order chain of :class:`~latentstruct.tasks.sequence.SequenceLabellingTask`
(J-LIS: "features corresponding to the current word and previous state", so that Viterbi
finds the best labelling): label transitions come from the base model, and each token's
emission attributes are the citation templates of :func:`citation_attributes`.  Loss is
Hamming; the metric is token accuracy.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from ...data.citations import MARKER, Citation, read_cora, write_cora
from ...data.readers import read_lines
from ...exceptions import InputError
from ..base import Dataset, register_task
from ...featurizers.templates import word_shape
from .featurizer import ChainFeaturizer, sentence_words_pos
from .dict_sentence import CRFSUITE_NAMES
from .labelling import SentenceReader, SequenceLabellingTask
from .raw import check_writable, citation_record, field_label_problem, sequence_dataset

__all__ = ["CitationTask", "CitationReader", "CitationFeaturizer", "citation_attributes"]

_YEAR = re.compile(r"(?<![0-9])(1[5-9][0-9]{2}|20[0-9]{2})[a-z]?(?![0-9])")
_RANGE = re.compile(r"[0-9]+\s*-+\s*[0-9]+")
_VOLUME = re.compile(r"[0-9]+\([0-9]+(?:[-/][0-9]+)?\)")
_INITIAL = re.compile(r"[A-Z]\.(?:-?[A-Z]\.)*,?")
_N_POSITION_BUCKETS = 10
_FIELD_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9_.-]*>")  # the tags of data.citations


def _core(lower: str) -> str:
    """The word without leading and trailing punctuation ("proc." -> "proc")."""
    core = lower.strip("\"'`()[]{}.,;:!?")
    return core or lower


def _case(word: str) -> str:
    letters = [c for c in word if c.isalpha()]
    if not letters:
        return "none"
    if all(c.isupper() for c in letters):
        return "upper" if len(letters) > 1 else "single-upper"
    if all(c.islower() for c in letters):
        return "lower"
    if letters[0].isupper() and all(c.islower() for c in letters[1:]):
        return "title"
    return "mixed"


def _digits(word: str) -> list[str]:
    n = sum(c.isdigit() for c in word)
    if n == 0:
        return ["dig=none"]
    out = ["dig=all" if n == len(word) else "dig=some", f"ndig={min(n, 5)}"]
    if _YEAR.search(word):
        out.append("year")
    if _RANGE.search(word):
        out.append("range")
    if _VOLUME.search(word):
        out.append("vol(num)")
    return out


def _punct_end(word: str) -> str:
    last = word[-1]
    return last if not last.isalnum() else "alnum"


def citation_attributes(
    tokens: Sequence[str], *, window: int = 1, affix_length: int = 3
) -> list[list[str]]:
    """Attribute strings of every token of one citation.

    Templates: bias; the word, its lowercase and its lowercase core (edge punctuation
    stripped); shape (:func:`~latentstruct.tasks.sequence.word_shape`) and capitalisation
    class; digit attributes (none/all/some, digit count, a year such as ``1992`` or
    ``(1991a).``, a page range ``127-136``, a volume ``4(2)``); initials (``A.``, ``W.-P.``);
    the first and last character when they are punctuation; prefixes and suffixes of the
    core up to ``affix_length``; the relative position in the citation in tenths plus
    first/last-token flags; and for neighbours within ``window`` their lowercase core and
    final punctuation (field boundaries often follow a ``.`` or ``,``).
    """
    n = len(tokens)
    lower = [w.lower() for w in tokens]
    core = [_core(lw) for lw in lower]
    ends = [_punct_end(w) for w in tokens]
    out = []
    for t, w in enumerate(tokens):
        attrs = ["b", "w=" + w, "l=" + lower[t], "c=" + core[t], "sh=" + word_shape(w),
                 "case=" + _case(w)]
        attrs.extend(_digits(w))
        if _INITIAL.fullmatch(w):
            attrs.append("initial")
        if not w[0].isalnum():
            attrs.append("first=" + w[0])
        attrs.append("last=" + ends[t])
        c = core[t]
        for k in range(1, affix_length + 1):
            if len(c) >= k:
                attrs.append(f"p{k}={c[:k]}")
                attrs.append(f"s{k}={c[-k:]}")
        attrs.append(f"pos={min(_N_POSITION_BUCKETS * t // n, _N_POSITION_BUCKETS - 1)}")
        if t == 0:
            attrs.append("first-token")
        if t == n - 1:
            attrs.append("last-token")
        for d in range(-window, window + 1):
            if d == 0:
                continue
            u = t + d
            if 0 <= u < n:
                attrs.append(f"c[{d}]={core[u]}")
                attrs.append(f"last[{d}]={ends[u]}")
            else:
                attrs.append(f"c[{d}]=" + ("<s>" if u < 0 else "</s>"))
        out.append(attrs)
    return out


class CitationFeaturizer(ChainFeaturizer):
    """The chain's featurizer with the citation templates (:func:`citation_attributes`)
    in place of the word templates; parameters and attributes are
    :class:`~latentstruct.tasks.sequence.featurizer.ChainFeaturizer`'s (``uses_pos`` is
    unused: citations have no tags)."""

    def template_attributes(self, sentence) -> list[list[str]]:
        """The citation templates of a citation's tokens (a token list, or a
        ``(tokens, None)`` pair)."""
        tokens, _ = sentence_words_pos(sentence)
        return citation_attributes(tokens, window=self.window, affix_length=self.affix_length)


def _has_marker(path) -> bool:
    return any(text.strip() == MARKER for _, text in read_lines(path))


def read_plain_references(path) -> list[Citation]:
    """Plain references, one per non-blank line, split at whitespace into tokens.  The
    records' labels are ``_`` (unknown); a tagged line (``<author> ...``) is an error."""
    name = os.fspath(path)
    out = []
    for lineno, text in read_lines(path):
        tokens = text.split()
        if not tokens:
            continue
        tag = next((t for t in tokens if _FIELD_TAG.fullmatch(t)), None)
        if tag is not None:
            raise InputError(
                f"{tag!r} looks like a Cora field tag, but the file has no {MARKER} lines; a "
                f"tagged file needs {MARKER} before every citation, plain input has no tags",
                name, lineno)
        out.append(Citation(tuple(tokens), ("_",) * len(tokens), lineno))
    if not out:
        raise InputError("contains no references; expected one reference per line", name)
    return out


class CitationReader(SentenceReader):
    """How ``citations`` reads and writes its citations: Cora's ``<NEWREFERENCE>`` format
    (plain references, one per line, as unlabelled input), Python lists of tokens, and
    predictions written back in the Cora format."""

    task_name = "citations"

    def words_pos(self, record) -> tuple:
        # a Citation, or a BinaryRecord (J-LIS binary example) built from one
        return record.tokens, None

    def tag_checks(self) -> tuple:
        """Field labels as the Cora format names fields, whatever the kind of sentence."""
        return field_label_problem, None, False

    def make_dataset(self, X, y=None, *, naming: str = CRFSUITE_NAMES) -> Dataset:
        """Citations from Python lists: ``X`` a list of citations, each a list of tokens (or
        of per-token feature dicts); ``y`` a list of field-label lists (labels such as
        ``author``, as the Cora format names its fields), or None (targets None).  The
        records are the ``Citation`` records the readers build (line 0)."""
        return sequence_dataset(X, y, token="token", build=citation_record,
                                check_tag=self.tag_checks()[0], naming=naming)

    def read(self, path, *, split: str = "train") -> Dataset:
        """Every citation of ``path`` (no sampling: pass a whole file per split; see
        :func:`~latentstruct.data.citations.split_cora` for the README's 300/100 split).

        For ``split="test"`` a file without any ``<NEWREFERENCE>`` line is unlabelled input:
        plain references, one per line (targets None; ``predict`` writes them tagged)."""
        if split != "train" and not _has_marker(path):
            citations = read_plain_references(path)
            return Dataset(citations, [None] * len(citations), str(path))
        citations = read_cora(path)
        return Dataset(citations, [c.labels for c in citations], str(path))

    def write(self, path, records, tags) -> None:
        """The citations in the Cora format with the predicted field labels."""
        check_writable(records, self.task_name)
        write_cora(path, records, tags)


@register_task
class CitationTask(SequenceLabellingTask):
    """Cora citation field extraction: label each token author, title, date, ...

    Parameters are those of :class:`~latentstruct.tasks.sequence.SequenceLabellingTask`
    (including the J-LIS S/B sampling options, whose B- are shuffled citations);
    ``window`` (default 1) is the neighbour range of the context attributes and
    ``affix_length`` (default 3) the longest prefix/suffix.  Reads the Cora
    ``<NEWREFERENCE>`` format (:func:`~latentstruct.data.citations.read_cora`) and writes
    predictions back in it.  ``evaluate`` reports token accuracy.

    Raw form (``make_dataset``): ``X`` holds one citation per example, a list of tokens,
    and ``y`` one list of field labels per citation (or None)::

        X = [["A.", "Cau.", "Formalising", "Dijkstra.", "1998."],
             ["J.", "Smith.", "Parsing."]]
        y = [["author", "author", "title", "title", "date"], ["author", "author", "title"]]

    A citation may instead be a list of per-token feature dicts (sklearn-crfsuite's
    format, ``tasks.sequence.raw``), a 2-D numeric array (tokens x columns) or a
    ``(tokens, array)`` pair (``tasks.sequence.numeric``); ``decode_predictions`` gives
    label lists like ``y``.
    """

    name = "citations"
    featurizer_class = CitationFeaturizer
    featurizer_defaults = {"window": 1}

    @property
    def reader(self) -> "CitationReader":
        """Cora ``<NEWREFERENCE>`` files (plain references as unlabelled input) and lists
        of tokens (:class:`CitationReader`)."""
        return CitationReader()
