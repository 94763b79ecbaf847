"""Dependency trees: reading CoNLL-U and PTB ``.dp`` files, writing CoNLL-U, scoring masks.

Two input formats are read into the same record, :class:`DependencySentence`:

* **CoNLL-U** (``.conllu``; UD treebanks) through :func:`~latentstruct.data.readers.read_conllu`,
  so multiword-token ranges and empty nodes are skipped exactly as it skips them and the
  original sentence is kept (``conllu``) to be written back with predicted heads;
* **PTB ``.dp``** (the NLTK dependency treebank): one token per line,
  ``word<TAB>POS<TAB>head`` with a 1-based head (0 = root), a blank line between
  sentences; no labels.  The POS tag goes to ``xpos`` (``upos`` is ``'_'``).  A directory
  is read as its ``*.dp`` files sorted by name.

Every tree is checked and a problem is an ``InputError`` naming ``file:line`` of the token
row at fault: HEAD missing (``_``), a head outside 0..n, a cycle (its words are named), no
root, or two roots when ``single_root`` is on (UD requires exactly one root, so it is the
default for CoNLL-U; ``.dp`` files are read as forests unless asked otherwise).

**Document split of the PTB sample.**  The WSJ sample has no official split, so
``read_dependencies(directory, split=...)`` splits it deterministically by document
number: ``"train"`` = wsj_0001..wsj_0119, ``"heldout"`` = wsj_0120..wsj_0142 (about 84/16
by sentence), ``"all"`` = every ``.dp`` file in the directory (the default).

**Scored tokens** (:func:`punctuation_mask`): UAS/LAS leave punctuation out.  For UD files
a token is punctuation when its gold UPOS is ``PUNCT``; for ``.dp`` files when its PTB tag
is one of ``` `` '' , . : ``` (the CoNLL-X / Penn convention, :data:`PTB_PUNCTUATION_TAGS`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from latentstruct.data.atomic import atomic_write
from latentstruct.data.path_rule import stream_descriptor
from latentstruct.data.readers.conllu import ConlluSentence, read_conllu
from latentstruct.data.readers.lines import excerpt, one_prediction_per_item, read_lines
from latentstruct.exceptions import ConfigError, InputError

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
]

#: PTB tags excluded from UAS/LAS on ``.dp`` data (CoNLL-X / Penn convention)
PTB_PUNCTUATION_TAGS = frozenset({"``", "''", ",", ".", ":"})
#: UPOS excluded from UAS/LAS on CoNLL-U data
UD_PUNCTUATION_UPOS = "PUNCT"
#: document ranges (inclusive) of the deterministic split of the PTB ``.dp`` sample
PTB_SPLITS = {"train": (1, 119), "heldout": (120, 142), "all": None}

_DP_NAME = re.compile(r"wsj_(\d{4})\.dp")
_CONLLU_SUFFIXES = (".conllu", ".conll")
_HEAD, _DEPREL = 6, 7


@dataclass(frozen=True)
class DependencySentence:
    """One sentence with its (gold) dependency tree.

    Attributes
    ----------
    words, lemmas, upos, xpos : tuple of str
        Token columns (``'_'`` where the format has none: lemmas and UPOS of ``.dp`` files).
    heads : tuple of int
        ``heads[k]`` is the head of word ``k + 1``: 0 for the root, else a word number.
    deprels : tuple of str
        Dependency labels, ``'_'`` for unlabelled trees.
    line : int
        1-based line where the sentence starts in ``path`` (0 when not read from a file).
    path : str
        File the sentence was read from (``""`` when built in memory).
    conllu : ConlluSentence or None
        The original CoNLL-U sentence (None for ``.dp`` input), written back by
        :func:`write_dependencies` with only HEAD and DEPREL replaced.
    file_format : {"conllu", "dp"}
        The source format; selects the punctuation convention of :func:`punctuation_mask`.
    """

    words: tuple[str, ...]
    lemmas: tuple[str, ...]
    upos: tuple[str, ...]
    xpos: tuple[str, ...]
    heads: tuple[int, ...]
    deprels: tuple[str, ...]
    line: int = 0
    path: str = ""
    conllu: ConlluSentence | None = None
    file_format: str = "conllu"

    def __post_init__(self):
        for name in ("words", "lemmas", "upos", "xpos", "heads", "deprels"):
            value = getattr(self, name)
            if not isinstance(value, tuple):
                object.__setattr__(self, name, tuple(value))
        n = len(self.words)
        lengths = {name: len(getattr(self, name))
                   for name in ("lemmas", "upos", "xpos", "heads", "deprels")}
        bad = {k: v for k, v in lengths.items() if v != n}
        if bad:
            raise InputError(
                f"DependencySentence needs one entry per word in every column; it has {n} "
                f"words but {', '.join(f'{v} {k}' for k, v in bad.items())}",
                self.path or None, self.line or None)
        if self.file_format not in ("conllu", "dp"):
            raise InputError(f"file_format must be 'conllu' or 'dp', got {self.file_format!r}")

    def __len__(self) -> int:
        return len(self.words)

    @property
    def labelled(self) -> bool:
        """Whether any word has a DEPREL (not ``'_'``)."""
        return any(d != "_" for d in self.deprels)

    @property
    def pos(self) -> tuple[str, ...]:
        """The POS column of the format: UPOS for CoNLL-U, the PTB tag (xpos) for ``.dp``."""
        return self.upos if self.file_format == "conllu" else self.xpos


# --------------------------------------------------------------------------------------
# validation
# --------------------------------------------------------------------------------------
def check_tree(heads: Sequence[int], words: Sequence[str], *, single_root: bool,
               path: str | None = None, token_lines: Sequence[int] | None = None,
               error: Callable[[int, str], InputError] | None = None) -> None:
    """Raise ``InputError`` unless ``heads`` (1-based, 0 = root) form a tree over the words.

    Checked in this order: every head is an integer in 0..n (-1 stands for a missing
    ``'_'``), some word is attached to the root, at most one is when ``single_root``, and no
    word is its own ancestor.  ``token_lines[k]`` is the file line of word ``k + 1``, used
    for the error location; ``error(k, message)``, when given, builds the error instead
    (in-memory data locates word ``k + 1`` as ``y[i][k]``).
    """
    n = len(heads)
    lines = list(token_lines) if token_lines is not None else [None] * n

    def fail(k: int, message: str):
        if error is not None:
            raise error(k, message)
        raise InputError(message, path, lines[k] if k < len(lines) else None)

    for k, h in enumerate(heads):
        if h == -1:
            fail(k, f"HEAD of word {k + 1} ({excerpt(words[k])}) is missing ('_'); expected 0 for the "
                    f"root or the number of the head word (1..{n})")
        if not 0 <= h <= n:
            fail(k, f"HEAD {h} of word {k + 1} ({excerpt(words[k])}) is out of range; expected 0 for "
                    f"the root or a word number 1..{n}")
    roots = [k for k, h in enumerate(heads) if h == 0]
    if not roots and n:
        fail(0, f"the sentence has no root: no word has HEAD 0; expected "
                f"{'exactly one' if single_root else 'at least one'} word attached to the root")
    if single_root and len(roots) > 1:
        fail(roots[1], f"word {roots[1] + 1} ({excerpt(words[roots[1]])}) is a second root (word "
                       f"{roots[0] + 1}, {excerpt(words[roots[0]])}, already has HEAD 0); a single "
                       f"root is required (UD trees have exactly one), so attach this word to "
                       f"another word or read the data with single_root=False")
    state = [0] * (n + 1)  # 0 unvisited, 1 on the current path, 2 known to reach the root
    state[0] = 2
    for start in range(1, n + 1):
        path_nodes = []
        v = start
        while state[v] == 0:
            state[v] = 1
            path_nodes.append(v)
            v = heads[v - 1]
        if state[v] == 1:  # came back to a word on this path: a cycle
            cycle = path_nodes[path_nodes.index(v):]
            first = min(cycle)
            order = cycle[cycle.index(first):] + cycle[:cycle.index(first)]
            names = " -> ".join(f"{m} {excerpt(words[m - 1])}" for m in order + [first])
            fail(first - 1, f"the heads form a cycle (each word's head is the next): {names}; "
                            f"a dependency tree has no cycles, every word must lead to the root")
        for u in path_nodes:
            state[u] = 2


# --------------------------------------------------------------------------------------
# reading
# --------------------------------------------------------------------------------------
def _sniff_format(path: Path) -> str:
    if path.suffix.lower() in _CONLLU_SUFFIXES:
        return "conllu"
    if path.suffix.lower() == ".dp":
        return "dp"
    for _, text in read_lines(path):
        if text.strip():
            return "conllu" if text.startswith("#") or text.count("\t") == 9 else "dp"
    return "dp"


def _from_conllu(path: str, sent: ConlluSentence, single_root: bool) -> DependencySentence:
    first_row = sent.line + len(sent.comments)
    token_lines = [first_row + k for k in sent.word_row_indices]
    words, heads = sent.words, sent.heads
    check_tree(heads, words, single_root=single_root, path=path, token_lines=token_lines)
    return DependencySentence(words, sent.lemmas, sent.upos, sent.xpos, heads, sent.deprels,
                              sent.line, path, sent, "conllu")


def _read_dp(path: str, single_root: bool) -> list[DependencySentence]:
    sentences: list[DependencySentence] = []
    words: list[str] = []
    tags: list[str] = []
    heads: list[int] = []
    lines: list[int] = []

    def flush():
        check_tree(heads, words, single_root=single_root, path=path, token_lines=lines)
        n = len(words)
        sentences.append(DependencySentence(
            tuple(words), ("_",) * n, ("_",) * n, tuple(tags), tuple(heads), ("_",) * n,
            lines[0], path, None, "dp"))

    for lineno, text in read_lines(path):
        if not text.strip():
            if words:
                flush()
                words, tags, heads, lines = [], [], [], []
            continue
        fields = text.split("\t")
        if len(fields) != 3:
            raise InputError(
                f"expected 3 tab-separated columns 'word<TAB>POS<TAB>head', got {len(fields)}: "
                f"{excerpt(text)}; each token line of a .dp file holds the word, its PTB tag and "
                f"its head (0 for the root), and a blank line ends a sentence", path, lineno)
        word, tag, head = fields
        if not word or not tag:
            raise InputError(f"empty {'word' if not word else 'POS tag'} in {excerpt(text)}; "
                             f"expected 'word<TAB>POS<TAB>head' with non-empty fields", path, lineno)
        head = head.strip()
        # more than 9 digits is no word number, and int() of thousands of digits fails
        if not (head.isdigit() and head.isascii()) or len(head) > 9:
            raise InputError(
                f"head {excerpt(head)} of word {len(words) + 1} ({excerpt(word)}) is not a "
                f"non-negative integer of at most 9 digits; expected 0 for the root or the "
                f"1-based number of the head word",
                path, lineno)
        words.append(word)
        tags.append(tag)
        heads.append(int(head))
        lines.append(lineno)
    if words:
        flush()
    if not sentences:
        raise InputError("contains no sentences; expected lines 'word<TAB>POS<TAB>head' with a "
                         "blank line after each sentence", path)
    return sentences


def dp_documents(directory, split: str = "all") -> list[Path]:
    """The ``.dp`` files of ``directory`` in ``split``, sorted by name.

    ``split``: ``"all"`` (every ``*.dp`` file), ``"train"`` (wsj_0001..wsj_0119) or
    ``"heldout"`` (wsj_0120..wsj_0142); see :data:`PTB_SPLITS`.  The named splits need
    files named ``wsj_NNNN.dp``.
    """
    if split not in PTB_SPLITS:
        raise ConfigError(f"unknown split {split!r} of a .dp directory; expected one of "
                          f"{', '.join(map(repr, PTB_SPLITS))}")
    directory = Path(directory)
    files = sorted(p for p in directory.iterdir() if p.suffix == ".dp" and p.is_file())
    if not files:
        raise InputError(f"{directory} holds no .dp files; expected files such as wsj_0001.dp "
                         f"(one token 'word<TAB>POS<TAB>head' per line)")
    bounds = PTB_SPLITS[split]
    if bounds is None:
        return files
    chosen = []
    for p in files:
        m = _DP_NAME.fullmatch(p.name)
        if m is None:
            raise InputError(f"cannot place {p.name} in the {split!r} split: the document split "
                             f"needs files named wsj_NNNN.dp; use split='all' to read every file")
        if bounds[0] <= int(m.group(1)) <= bounds[1]:
            chosen.append(p)
    if not chosen:
        raise InputError(f"{directory} holds no documents of the {split!r} split "
                         f"(wsj_{bounds[0]:04d}..wsj_{bounds[1]:04d})")
    return chosen


def read_dependencies(path, *, single_root: bool | None = None,
                      split: str = "all") -> list[DependencySentence]:
    """Read dependency trees from a CoNLL-U file, a ``.dp`` file or a directory of them.

    Parameters
    ----------
    path : str or os.PathLike
        A ``.conllu`` file, a ``.dp`` file, or a directory whose ``*.dp`` files are read in
        name order (other suffixes are sniffed: a first line starting with ``#`` or holding
        10 tab-separated fields means CoNLL-U).
    single_root : bool or None
        Require exactly one word attached to the root.  None: the format's convention, True
        for CoNLL-U (UD) and False for ``.dp``.
    split : {"all", "train", "heldout"}
        For a directory, the deterministic document split (module docstring); files must
        then be named ``wsj_NNNN.dp``.  Only ``"all"`` is allowed for a single file.

    Returns
    -------
    list of DependencySentence

    Raises
    ------
    InputError
        Malformed input, with ``file:line`` of the offending token row (for a directory,
        the file inside it).
    """
    p = Path(path)
    if split != "all" and not p.is_dir():
        if split not in PTB_SPLITS:
            raise ConfigError(f"unknown split {split!r}; expected one of "
                              f"{', '.join(map(repr, PTB_SPLITS))}")
        raise ConfigError(f"split={split!r} selects documents of a directory of wsj_NNNN.dp "
                          f"files, but {os.fspath(path)} is not a directory; use split='all'")
    if p.is_dir():
        files = dp_documents(p, split)
        out: list[DependencySentence] = []
        for f in files:
            out.extend(_read_dp(os.fspath(f), bool(single_root)))
        return out
    name = os.fspath(path)
    if stream_descriptor(name) is None and not p.exists():  # "-" is standard input
        from latentstruct.data.paths import missing_file_hint

        raise InputError(f"no such file or directory: {name} (working directory: {Path.cwd()})"
                         f"{missing_file_hint(name)}")
    if _sniff_format(p) == "conllu":
        root = True if single_root is None else bool(single_root)
        return [_from_conllu(name, s, root) for s in read_conllu(p)]
    return _read_dp(name, bool(single_root))


# --------------------------------------------------------------------------------------
# writing
# --------------------------------------------------------------------------------------
def _check_label(label, k: int, sent: DependencySentence) -> str:
    if not isinstance(label, str) or not label or any(c.isspace() for c in label):
        raise InputError(f"cannot write sentence {k} (read from line {sent.line}): predicted "
                         f"DEPREL {excerpt(label)} must be a non-empty string without whitespace")
    return label


def write_dependencies(path, sentences: Sequence[DependencySentence], heads_list,
                       deprels_list=None) -> None:
    """Write ``sentences`` as CoNLL-U with HEAD and DEPREL replaced by predictions.

    Sentences read from CoNLL-U keep every other column, their comments, multiword-token
    ranges and empty nodes.  Sentences read from ``.dp`` become rows
    ``ID FORM _ _ XPOS _ HEAD DEPREL _ _``.  ``heads_list`` holds one head sequence per
    sentence (1-based, 0 = root), ``deprels_list`` one label sequence per sentence (None:
    ``'_'`` everywhere).  The file is written atomically.
    """
    sentences = list(sentences)
    heads_list = one_prediction_per_item("write_dependencies", sentences, heads_list,
                                         "sentence", "head sequence")
    if deprels_list is None:
        deprels_list = [("_",) * len(s) for s in sentences]
    deprels_list = one_prediction_per_item("write_dependencies", sentences, deprels_list,
                                           "sentence", "label sequence")
    chunks = []
    for k, (sent, heads, labels) in enumerate(zip(sentences, heads_list, deprels_list)):
        heads = [int(h) for h in np.asarray(heads).ravel()]
        labels = list(labels)
        n = len(sent)
        if len(heads) != n or len(labels) != n:
            raise InputError(f"cannot write sentence {k} (read from line {sent.line}): it has {n} "
                             f"words but {len(heads)} predicted heads and {len(labels)} labels")
        bad = [h for h in heads if not 0 <= h <= n]
        if bad:
            raise InputError(f"cannot write sentence {k} (read from line {sent.line}): predicted "
                             f"head {bad[0]} is outside 0..{n}")
        labels = [_check_label(lab, k, sent) for lab in labels]
        if sent.conllu is not None:
            rows = list(sent.conllu.rows)
            for idx, h, lab in zip(sent.conllu.word_row_indices, heads, labels):
                row = rows[idx]
                rows[idx] = row[:_HEAD] + (str(h), lab) + row[_DEPREL + 1:]
            lines = [c + "\n" for c in sent.conllu.comments]
        else:
            rows = [(str(i + 1), sent.words[i], sent.lemmas[i], sent.upos[i], sent.xpos[i], "_",
                     str(heads[i]), labels[i], "_", "_") for i in range(n)]
            lines = []
        lines.extend("\t".join(row) + "\n" for row in rows)
        lines.append("\n")
        chunks.append("".join(lines))
    with atomic_write(path, "w", encoding="utf-8") as fh:
        fh.writelines(chunks)


# --------------------------------------------------------------------------------------
# evaluation convention
# --------------------------------------------------------------------------------------
def punctuation_mask(sentence: DependencySentence) -> np.ndarray:
    """Boolean array over the words, True where the token is scored by UAS/LAS.

    UD (CoNLL-U) sentences: every token whose gold UPOS is not ``PUNCT``.  PTB ``.dp``
    sentences: every token whose tag is not one of ``` `` '' , . : ``` (the CoNLL-X /
    Penn convention; ``-LRB-``, ``-RRB-``, ``#`` and ``$`` are scored).
    """
    if sentence.file_format == "conllu":
        return np.fromiter((u != UD_PUNCTUATION_UPOS for u in sentence.upos), bool, len(sentence))
    return np.fromiter((t not in PTB_PUNCTUATION_TAGS for t in sentence.xpos), bool, len(sentence))
