"""Transliteration pairs: the Wikidata name TSV files and English–X place names from CLDR.

Two sources of (English word, target-script word) pairs:

* :func:`read_translit_tsv` reads the Merhav & Ash (2018) Wikidata person-name files of
  ``../shared/data/translit/<lang>/`` (see its README);
* :func:`cldr_pairs` builds pairs from the Unicode CLDR names that Babel ships (time-zone
  exemplar cities and territory names), so the demo needs no downloaded data.

Both return lists of ``(source, target)`` strings with a lowercased source.
"""

from __future__ import annotations

import functools
import re
import unicodedata

from ..exceptions import ConfigError, InputError
from .readers.lines import excerpt, read_lines

__all__ = [
    "LANGUAGES",
    "MAX_WORD_CHARS",
    "check_word_length",
    "clean_word",
    "check_language",
    "read_translit_tsv",
    "cldr_pairs",
    "strip_direction_marks",
    "consonant_similarity",
]

#: target languages with CLDR pairs and a shared Wikidata folder
LANGUAGES = ("he", "ru", "ar")

# Invisible bidirectional controls: LRM/RLM (U+200E/U+200F), the embedding and override
# controls U+202A-U+202E, the isolates U+2066-U+2069 and the Arabic letter mark U+061C.
_DIRECTION_MARKS = re.compile("[\u200e\u200f\u202a-\u202e\u2066-\u2069\u061c]")


#: Longest word (characters, either side) a transliteration pair may have.  The Wikidata
#: name files top out at 21 (English) and 42 (target) characters.  Every pair costs an
#: m x n alignment and evaluation aligns every source with every target, so one absurd
#: word would stall training and evaluation; it is refused, not truncated, because a cut
#: word is a different name.
MAX_WORD_CHARS = 100


def check_word_length(word: str, what: str, path=None, line=None) -> None:
    """Raise ``InputError`` (with ``path``/``line`` when given) if ``word`` is longer than
    :data:`MAX_WORD_CHARS` characters."""
    if len(word) > MAX_WORD_CHARS:
        raise InputError(
            f"{what} is {len(word):,} characters long ({excerpt(word, 40)}), over the limit of "
            f"{MAX_WORD_CHARS} characters per word; it is refused, not truncated (pairs are "
            f"single names, and every pair is aligned character by character)",
            path,
            line,
        )


def check_language(lang) -> str:
    """Return ``lang`` if it is one of :data:`LANGUAGES`, else raise ``ConfigError``."""
    if not isinstance(lang, str) or lang not in LANGUAGES:
        raise ConfigError(
            f"unknown language code {lang!r}; expected one of: {', '.join(sorted(LANGUAGES))}"
        )
    return lang


def strip_direction_marks(text: str) -> str:
    """``text`` without invisible direction marks (U+200E, U+200F and the other bidi controls)."""
    return _DIRECTION_MARKS.sub("", text)


def clean_word(word: str, side: str, path=None, line=None, *, what: str,
               expected: str = "a word") -> str:
    """One word of a pair as every reader keeps it, after the checks they share.

    Direction marks are removed (:func:`strip_direction_marks`); a ``side="source"`` word
    is stripped and lowercased, a ``side="target"`` word loses all white space (the TSV
    files write its characters separated by spaces).  Raises ``InputError`` at
    ``path``/``line`` (a file and its line, or an in-memory location such as ``X[3][0]``)
    for a word that is then empty or longer than :data:`MAX_WORD_CHARS`; ``what`` names the
    word in messages ("English word in column 1") and ``expected`` says what should be
    there.  The TSV reader and ``TransliterationTask.make_dataset`` both call it.
    """
    if side not in ("source", "target"):
        raise ValueError(f"side must be 'source' or 'target', got {side!r}")
    word = strip_direction_marks(word)
    word = word.strip().lower() if side == "source" else "".join(word.split())
    if not word:
        raise InputError(f"empty {what}; expected {expected}", path, line)
    check_word_length(word, f"the {what}", path, line)
    return word


# --------------------------------------------------------------------------------------
# Wikidata TSV
# --------------------------------------------------------------------------------------
def read_translit_tsv(path) -> list[tuple[str, str]]:
    """Read a transliteration TSV: ``english<TAB>t a r g e t<TAB>count`` per line.

    Returns ``(source, target)`` pairs in file order: the source lowercased, the target with
    the spaces between its characters removed, both without direction marks
    (:func:`strip_direction_marks`).  The count column must be a non-negative integer and is
    not returned.  Lines that are empty are skipped.

    Raises ``InputError`` (with the file and the 1-based line) for a line without exactly 3
    TAB-separated columns, an empty source or target, a word longer than
    :data:`MAX_WORD_CHARS` characters, a bad count, a NUL byte, bytes that are not UTF-8, a
    line longer than ``readers.MAX_LINE_CHARS``, a missing file, and a file that contains no
    pairs.
    """
    name = str(path)
    pairs: list[tuple[str, str]] = []
    for lineno, text in read_lines(path):
        if not text.strip():
            continue
        cols = text.split("\t")
        if len(cols) != 3:
            raise InputError(
                f"expected 3 TAB-separated columns (English word, target characters separated "
                f"by spaces, count), got {len(cols)} column{'s' if len(cols) != 1 else ''}",
                name,
                lineno,
            )
        source = clean_word(cols[0], "source", name, lineno, what="English word in column 1",
                            expected="a word")
        target = clean_word(cols[1], "target", name, lineno, what="target word in column 2",
                            expected="its characters separated by spaces")
        count = cols[2].strip()
        if not count.isascii() or not count.isdigit():
            raise InputError(
                f"count in column 3 must be a non-negative integer, got {excerpt(cols[2])}",
                name,
                lineno,
            )
        pairs.append((source, target))
    if not pairs:
        raise InputError(
            "contains no pairs; expected lines 'english<TAB>t a r g e t<TAB>count'", name
        )
    return pairs


# --------------------------------------------------------------------------------------
# CLDR place names
# --------------------------------------------------------------------------------------
# Consonant classes of romanised letters (anyascii, lowercased).  Vowels, h, y, w and
# apostrophes carry no class: Hebrew and Arabic write few vowels, and their vowel letters
# (alef, vav, yod, he; alif, waw, ya) romanise to ', v/w, y, h.
_CONSONANT_CLASS = {}
for _letters, _cls in (
    ("bpf", "B"), ("kqgx", "K"), ("sz", "S"), ("td", "T"), ("l", "L"), ("r", "R"),
    ("m", "M"), ("n", "N"), ("c", "C"), ("j", "J"),
):
    for _ch in _letters:
        _CONSONANT_CLASS[_ch] = _cls
# c sounds like k, s or ts; j like g (Hebrew gimel+geresh), zh or dzh.
_CLASS_MATCH = {("C", "K"), ("C", "S"), ("C", "T"), ("J", "K"), ("J", "S"), ("J", "T")}


def _classes_match(a: str, b: str) -> bool:
    return a == b or (a, b) in _CLASS_MATCH or (b, a) in _CLASS_MATCH


def _skeleton(word: str, v_is_labial: bool) -> list[str]:
    from anyascii import anyascii

    out: list[str] = []
    for ch in anyascii(word).lower():
        cls = ("B" if v_is_labial else None) if ch == "v" else _CONSONANT_CLASS.get(ch)
        if cls is not None and (not out or out[-1] != cls):
            out.append(cls)
    return out


def _lcs(a: list[str], b: list[str]) -> int:
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if _classes_match(x, y) else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def consonant_similarity(source: str, target: str) -> float:
    """How well the consonants of two words agree, in [0, 1]; the CLDR pair filter.

    Both words are romanised with ``anyascii`` and lowercased, and reduced to a *skeleton*
    of consonant classes (b/p/f, k/q/g/x, s/z, t/d, l, r, m, n, c, j; repeated classes
    collapsed; vowels, h, y, w and apostrophes skipped; c may match k, s or t and j may
    match k, s or t).  The similarity is the longest common subsequence of the skeletons
    divided by the longer skeleton, computed twice — with v as a labial (b/p/f) and with v
    skipped, because Hebrew vav romanises to v but is mostly a vowel letter — and the larger
    value is returned.  Two words without consonants score 1, one without scores 0.
    """
    best = 0.0
    for v_is_labial in (True, False):
        a, b = _skeleton(source, v_is_labial), _skeleton(target, v_is_labial)
        if not a and not b:
            return 1.0
        if a and b:
            best = max(best, _lcs(a, b) / max(len(a), len(b)))
    return best


_WORD_SPLIT = re.compile(r"[\s\-\u2010\u2011\u05be]+")  # spaces, hyphens, Hebrew maqaf
_TARGET_PUNCT_OK = frozenset("\u05f3\u05f4'")  # Hebrew geresh/gershayim, apostrophe
#: territory codes that are not places (groupings, pseudo-locales, "unknown")
_SKIP_TERRITORIES = frozenset({"EU", "EZ", "QO", "UN", "XA", "XB", "ZZ"})
#: minimum :func:`consonant_similarity` of every word pair, and mean of a multi-word name
_MIN_SIMILARITY = 0.5
_MIN_MEAN_SIMILARITY_MULTI = 0.6


def _is_word(word: str, target: bool) -> bool:
    if not word:
        return False
    for ch in word:
        cat = unicodedata.category(ch)
        if cat.startswith("L") or cat == "Mn" or (target and ch in _TARGET_PUNCT_OK):
            continue
        return False
    return True


def _cldr_names(lang: str) -> list[tuple[str, str]]:
    """(English name, target name) of exemplar cities and territories, in a fixed order."""
    from babel import Locale

    loc, en = Locale(lang), Locale("en")
    names = []
    en_zones = en.time_zones
    for zone in sorted(loc.time_zones):
        city = loc.time_zones[zone].get("city")
        if not city or zone.startswith("Etc/"):
            continue
        english = en_zones.get(zone, {}).get("city") or zone.rsplit("/", 1)[-1].replace("_", " ")
        names.append((english, city))
    en_territories = en.territories
    for code in sorted(loc.territories):
        if code.isdigit() or code in _SKIP_TERRITORIES or code not in en_territories:
            continue
        names.append((en_territories[code], loc.territories[code]))
    return names


@functools.lru_cache(maxsize=None)
def _cldr_pairs_cached(lang: str) -> tuple[tuple[str, str], ...]:
    names = [
        (_WORD_SPLIT.split(e.strip()), _WORD_SPLIT.split(t.strip())) for e, t in _cldr_names(lang)
    ]
    chosen: dict[str, str] = {}
    # single-word names first, so that they win over words split out of longer names
    for multi in (False, True):
        for e_words, t_words in names:
            if (len(e_words) > 1) != multi or len(e_words) != len(t_words):
                continue
            words = [
                (a.lower(), b.lower())
                for a, b in zip(e_words, t_words)
                if _is_word(a, False) and _is_word(b, True)
            ]
            if not words or (not multi and len(words) != 1):
                continue
            sims = [consonant_similarity(a, b) for a, b in words]
            if min(sims) < _MIN_SIMILARITY:
                continue
            if multi and sum(sims) / len(sims) < _MIN_MEAN_SIMILARITY_MULTI:
                continue
            for a, b in words:
                chosen.setdefault(a, b)
    return tuple(sorted(chosen.items()))


def cldr_pairs(lang: str) -> list[tuple[str, str]]:
    """English–``lang`` place-name pairs from the Unicode CLDR data shipped with Babel.

    Sources, for ``Locale(lang)`` against ``Locale("en")``:

    * the exemplar city of every time zone (``Locale(lang).time_zones[zone]["city"]``);
      its English name is ``Locale("en").time_zones[zone]["city"]`` when CLDR has one,
      else the last part of the zone id with ``_`` read as a space (``America/St_Johns``
      -> ``St Johns``).  ``Etc/`` zones are skipped;
    * territory names (``Locale(...).territories``), skipping numeric region codes and the
      non-places EU, EZ, QO, UN, XA, XB, ZZ.

    Names are split into words at spaces and hyphens (also U+2010, U+2011, Hebrew maqaf).
    A name that is one word on both sides gives one pair; a name with the same number of
    words on both sides gives one pair per word position (``Buenos Aires`` /
    ``בואנוס איירס``).  Names with different word counts are dropped.  Words must be
    letters only (the target may also hold combining marks, Hebrew geresh/gershayim and
    apostrophes), else the word pair is dropped (``St.``, ``John’s``).  Both sides are
    lowercased (the target only matters for Cyrillic).

    Filter (mild, to drop translations rather than transliterations, e.g. ``egypt`` /
    ``מצרים``, ``greece`` / ``יוון``, or word pairs of names whose word order differs,
    ``north dakota`` / ``דקוטה הצפונית``): every word pair needs
    :func:`consonant_similarity` >= 0.5, and a multi-word name additionally a mean
    similarity >= 0.6 over its words, or the whole name is dropped.  Some noise remains
    (``south`` / ``южная``, ``china`` / ``китай``).

    Pairs are deduplicated by English word (single-word names first, then words of longer
    names, each in sorted zone-id / territory-code order; the first target seen wins) and
    returned sorted by English word.  The names change between CLDR releases: Babel 2.18
    (CLDR 47) gives 574 pairs for ``he``, 594 for ``ru`` and 542 for ``ar``; Babel 2.19
    (CLDR 49) 558, 579 and 523.  The result is cached.

    Raises ``ConfigError`` for a language code not in :data:`LANGUAGES`.
    """
    check_language(lang)
    return list(_cldr_pairs_cached(lang))
