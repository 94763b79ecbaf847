"""WordNet 3.0 word similarity in the spirit of WNSim (used by the LCLR entailment and
paraphrase features, LCLR §5.2-5.3).

The dictionary comes from the operating system, never from a download at run time: on
Debian/Ubuntu::

    apt-get update && apt-get install -y --no-install-recommends wordnet-base wordnet-sense-index

installs the WordNet 3.0 database files in ``/usr/share/wordnet``.  They are read with
NLTK's ``WordNetCorpusReader`` (``pip install "nltk>=3.8"``).  That reader also wants the
``lexnames`` table (lexicographer file numbers and names, documented in WordNet's
``lexnames(5WN)``), which Debian does not ship as a data file; latentstruct carries its
own copy in ``latentstruct/resources/wordnet_lexnames``.

The dictionary folder is ``dict_dir`` if given, else ``$WNSEARCHDIR`` (WordNet's own
variable), else ``/usr/share/wordnet``.  NLTK (3.9.3 and later) only opens corpus files under
its registered data roots, so the folder is appended to ``nltk.data.path`` when a
``WordNet`` is created (a process-wide, idempotent registration).

Similarity (``WordNet.similarity``), for two words with their POS (universal tags such as
``NOUN``, ``PROPN``, ``VERB``, ``AUX``, ``ADJ``, ``ADV``, or WordNet's ``n v a s r``):

1. both words are reduced to a base form with WordNet's morphology (``went`` -> ``go``);
   equal base forms score 1.0 (also across POS, and for words WordNet does not cover,
   such as determiners, which otherwise score 0.0);
2. antonyms (direct WordNet antonymy, see :meth:`WordNet.is_antonym`) score 0.0;
3. words of different WordNet POS score ``decay`` if one is a derivationally related
   form or pertainym of the other (``destroy`` / ``destruction``), else 0.0;
4. synonyms (a shared synset) score 1.0;
5. otherwise ``decay ** d``, where ``d`` is the shortest path between a sense of each word
   through a common ancestor, going up hypernym (and instance-hypernym) links for nouns
   and verbs and along similar-to links for adjectives, ``d <= max_distance`` (6 by
   default); no such path scores 0.0.  So a direct hypernym scores ``decay`` (0.8 by default),
   ``dog``/``animal`` (dog -> domestic animal -> animal) ``decay**2``, and unrelated words 0.

Results are memoised per instance.
"""

from __future__ import annotations

import io
import os
import warnings
from collections import deque
from importlib import resources
from pathlib import Path

from latentstruct.exceptions import ConfigError

__all__ = ["WordNet", "WORDNET_ENV_VAR", "DEFAULT_WORDNET_DIR", "APT_PACKAGES", "wordnet_pos",
           "lexnames_text"]

WORDNET_ENV_VAR = "WNSEARCHDIR"
DEFAULT_WORDNET_DIR = "/usr/share/wordnet"
APT_PACKAGES = ("wordnet-base", "wordnet-sense-index")
_INSTALL = (
    "apt-get update && apt-get install -y --no-install-recommends "
    + " ".join(APT_PACKAGES)
)
_REQUIRED_FILES = tuple(
    f"{kind}.{pos}" for kind in ("index", "data") for pos in ("noun", "verb", "adj", "adv")
) + tuple(f"{pos}.exc" for pos in ("noun", "verb", "adj", "adv"))

# universal POS (and WordNet's letters) -> WordNet POS; tags mapped to None have no WordNet
# entries (words with them only match themselves)
_UPOS = {
    "NOUN": "n", "PROPN": "n", "VERB": "v", "AUX": "v", "ADJ": "a", "ADV": "r",
    "ADP": None, "CCONJ": None, "DET": None, "INTJ": None, "NUM": None, "PART": None,
    "PRON": None, "PUNCT": None, "SCONJ": None, "SYM": None, "X": None, "SPACE": None,
    "n": "n", "v": "v", "a": "a", "s": "a", "r": "r",
}


def wordnet_pos(pos: str) -> str | None:
    """WordNet POS letter (``n v a r``) for a universal POS tag or WordNet letter; None for
    tags WordNet has no entries for (``DET``, ``PRON``, ...).  Raises ConfigError for an
    unknown tag."""
    try:
        return _UPOS[pos]
    except (KeyError, TypeError):
        raise ConfigError(
            f"unknown POS {pos!r}; expected a universal POS tag ({', '.join(k for k in _UPOS if k.isupper())}) "
            f"or a WordNet POS letter (n, v, a, s, r)"
        ) from None


def lexnames_text() -> str:
    """The bundled lexicographer-file table (``NN<TAB>name<TAB>syntactic category``)."""
    return resources.files("latentstruct").joinpath("resources", "wordnet_lexnames").read_text(
        encoding="utf-8"
    )


def _find_dict_dir(dict_dir) -> Path:
    if dict_dir is not None:
        where, path = "dict_dir", Path(dict_dir).expanduser()
    elif os.environ.get(WORDNET_ENV_VAR):
        where, path = f"${WORDNET_ENV_VAR}", Path(os.environ[WORDNET_ENV_VAR]).expanduser()
    else:
        where, path = "the default", Path(DEFAULT_WORDNET_DIR)
    missing = [f for f in _REQUIRED_FILES if not (path / f).is_file()]
    if missing:
        state = "does not exist" if not path.is_dir() else f"lacks {', '.join(missing)}"
        raise ConfigError(
            f"WordNet 3.0 dictionary not found: {path} ({where}) {state}. Install it with "
            f"`{_INSTALL}` (Debian/Ubuntu; files go to {DEFAULT_WORDNET_DIR}), or pass dict_dir= "
            f"/ set ${WORDNET_ENV_VAR} to a folder holding the WordNet 3.0 database files "
            f"(index.noun, data.noun, noun.exc, ...)"
        )
    return path.resolve()


def _open_reader(path: Path):
    """NLTK's WordNetCorpusReader on ``path`` with the bundled lexnames table."""
    try:
        import nltk.data
        from nltk.corpus.reader.wordnet import WordNetCorpusReader
    except ImportError:
        raise ConfigError(
            "WordNet similarity needs NLTK's WordNet reader; install it with "
            "`pip install \"nltk>=3.8\"` (or `pip install -e \".[nlp]\"`)"
        ) from None

    lexnames = lexnames_text()

    class _Reader(WordNetCorpusReader):
        def open(self, file):
            if file == "lexnames":  # not shipped by Debian: use the bundled table
                return io.StringIO(lexnames)
            return super().open(file)

        def map_wn(self, version="wordnet"):
            # Only needed to map other WordNet versions for the multilingual (OMW) data,
            # which is not used; NLTK would otherwise look for its own downloaded copy.
            return None

    if str(path) not in [str(p) for p in nltk.data.path]:
        nltk.data.path.append(str(path))
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The multilingual functions are not available")
        try:
            return _Reader(str(path), None)
        except (OSError, ValueError, AssertionError) as exc:
            raise ConfigError(
                f"NLTK could not read the WordNet dictionary in {path}: {exc}. Reinstall it with "
                f"`{_INSTALL}`"
            ) from None


class WordNet:
    """WordNet 3.0 lexical similarity (see the module docstring for the scoring rules).

    Parameters
    ----------
    dict_dir : str, path or None
        Folder with the WordNet database files; None: ``$WNSEARCHDIR`` or
        ``/usr/share/wordnet``.
    decay : float in (0, 1)
        Score factor per step in the hypernym / similar-to graph.
    max_distance : int >= 0
        Longest path (steps up from one word plus steps up from the other to their common
        ancestor) that still scores above 0.

    Raises ``ConfigError`` at construction if the dictionary or NLTK is missing, saying
    what to install.  ``reader`` is the underlying NLTK reader.
    """

    def __init__(self, dict_dir=None, decay: float = 0.8, max_distance: int = 6):
        if not isinstance(decay, (int, float)) or not 0.0 < decay < 1.0:
            raise ConfigError(f"decay must be a float in (0, 1), got {decay!r}")
        if not isinstance(max_distance, int) or isinstance(max_distance, bool) or max_distance < 0:
            raise ConfigError(f"max_distance must be a non-negative int, got {max_distance!r}")
        self.dict_dir = dict_dir
        self.decay = float(decay)
        self.max_distance = max_distance
        self.path = _find_dict_dir(dict_dir)
        self.reader = _open_reader(self.path)
        self._sim: dict[tuple, float] = {}
        self._anto: dict[tuple, bool] = {}
        self._base: dict[tuple, str] = {}
        self._synsets: dict[tuple, tuple] = {}
        self._supersenses: dict[tuple, tuple] = {}
        self._up: dict[str, dict] = {}

    def __repr__(self) -> str:
        return f"WordNet(dict_dir={self.dict_dir!r}, decay={self.decay!r}, max_distance={self.max_distance!r})"

    # -- lookups ---------------------------------------------------------------------------
    def base_form(self, word: str, pos: str) -> str:
        """Lower-cased base form of ``word`` (WordNet morphology; spaces become ``_``)."""
        p = wordnet_pos(pos)
        key = (word, p)
        if key not in self._base:
            if not isinstance(word, str):
                raise ConfigError(f"word must be a str, got {type(word).__name__}")
            w = "_".join(word.strip().lower().split())
            base = self.reader.morphy(w, p) if (p is not None and w) else None
            self._base[key] = base or w
        return self._base[key]

    def synsets(self, word: str, pos: str) -> tuple:
        """The synsets of ``word`` with WordNet POS of ``pos`` (empty for other tags)."""
        p = wordnet_pos(pos)
        if p is None:
            return ()
        base = self.base_form(word, pos)
        key = (base, p)
        if key not in self._synsets:
            self._synsets[key] = tuple(self.reader.synsets(base, p)) if base else ()
        return self._synsets[key]

    def supersenses(self, word: str, pos: str) -> tuple[str, ...]:
        """The supersenses of ``word`` with WordNet POS of ``pos``: the lexicographer-file
        names (``noun.person``, ``verb.motion``, ...; see ``lexnames(5WN)``) of its synsets.

        Each name appears once, in the order of its first synset in WordNet's sense order
        (most frequent sense first), so ``shares``/``NOUN`` gives ``("noun.possession",
        "noun.act", "noun.artifact")`` (Koo & Collins 2005, §4.1).  Words are reduced to
        their base form first (:meth:`base_form`).  Empty for a word WordNet does not list
        and for tags without WordNet entries (``ADP``, ``DET``, ...).
        """
        p = wordnet_pos(pos)
        if p is None:
            return ()
        key = (self.base_form(word, pos), p)
        if key not in self._supersenses:
            names: dict[str, None] = {}
            for synset in self.synsets(word, pos):
                names.setdefault(synset.lexname(), None)
            self._supersenses[key] = tuple(names)
        return self._supersenses[key]

    def _upward(self, synset) -> dict:
        """{synset name: fewest steps} reachable from ``synset`` within max_distance."""
        name = synset.name()
        if name in self._up:
            return self._up[name]
        adjective = synset.pos() in ("a", "s")
        dist = {name: 0}
        queue = deque([(synset, 0)])
        while queue:
            s, d = queue.popleft()
            if d == self.max_distance:
                continue
            nexts = s.similar_tos() if adjective else s.hypernyms() + s.instance_hypernyms()
            for t in nexts:
                if t.name() not in dist:
                    dist[t.name()] = d + 1
                    queue.append((t, d + 1))
        self._up[name] = dist
        return dist

    def distance(self, word1: str, pos1: str, word2: str, pos2: str) -> int | None:
        """Fewest steps between a sense of each word through a common ancestor (0 for
        synonyms), or None if there is none of at most ``max_distance`` steps."""
        best = None
        ups2 = [self._upward(s) for s in self.synsets(word2, pos2)]
        for s1 in self.synsets(word1, pos1):
            up1 = self._upward(s1)
            for up2 in ups2:
                small, large = (up1, up2) if len(up1) <= len(up2) else (up2, up1)
                for node, d in small.items():
                    if node in large:
                        total = d + large[node]
                        if total <= self.max_distance and (best is None or total < best):
                            best = total
        return best

    # -- relations -------------------------------------------------------------------------
    def _antonym_one_way(self, base1: str, p: str, base2: str) -> bool:
        for synset in self.reader.synsets(base1, p):
            for lemma in synset.lemmas():
                if lemma.name().lower() != base1:
                    continue
                for ant in lemma.antonyms():
                    if any(l.name().lower() == base2 for l in ant.synset().lemmas()):
                        return True
        return False

    def is_antonym(self, word1: str, pos1: str, word2: str, pos2: str) -> bool:
        """True if WordNet lists a sense of one word as the direct antonym of a sense of the
        other (or of a synonym in that antonym's synset), e.g. good/bad, win/lose.  Words of
        different WordNet POS are never antonyms."""
        p1, p2 = wordnet_pos(pos1), wordnet_pos(pos2)
        if p1 is None or p1 != p2:
            return False
        b1, b2 = self.base_form(word1, pos1), self.base_form(word2, pos2)
        key = (b1, b2, p1) if b1 <= b2 else (b2, b1, p1)
        if key not in self._anto:
            self._anto[key] = b1 != b2 and (
                self._antonym_one_way(b1, p1, b2) or self._antonym_one_way(b2, p1, b1)
            )
        return self._anto[key]

    def _related_form_one_way(self, base1: str, p1: str, base2: str, p2: str) -> bool:
        for synset in self.reader.synsets(base1, p1):
            for lemma in synset.lemmas():
                if lemma.name().lower() != base1:
                    continue
                for other in lemma.derivationally_related_forms() + lemma.pertainyms():
                    pos = "a" if other.synset().pos() == "s" else other.synset().pos()
                    if pos == p2 and other.name().lower() == base2:
                        return True
        return False

    def is_related_form(self, word1: str, pos1: str, word2: str, pos2: str) -> bool:
        """True if one word is a derivationally related form or pertainym of the other."""
        p1, p2 = wordnet_pos(pos1), wordnet_pos(pos2)
        if p1 is None or p2 is None:
            return False
        b1, b2 = self.base_form(word1, pos1), self.base_form(word2, pos2)
        return self._related_form_one_way(b1, p1, b2, p2) or self._related_form_one_way(b2, p2, b1, p1)

    # -- similarity ------------------------------------------------------------------------
    def similarity(self, word1: str, pos1: str, word2: str, pos2: str) -> float:
        """WNSim-style similarity in [0, 1] (rules in the module docstring); symmetric."""
        p1, p2 = wordnet_pos(pos1), wordnet_pos(pos2)
        b1, b2 = self.base_form(word1, pos1), self.base_form(word2, pos2)
        key = (b1, p1, b2, p2) if (b1, str(p1)) <= (b2, str(p2)) else (b2, p2, b1, p1)
        if key in self._sim:
            return self._sim[key]
        if b1 == b2 and b1:
            score = 1.0
        elif p1 is None or p2 is None or not b1 or not b2:
            score = 0.0
        elif p1 != p2:
            score = self.decay if self.is_related_form(word1, pos1, word2, pos2) else 0.0
        elif self.is_antonym(word1, pos1, word2, pos2):
            score = 0.0
        else:
            d = self.distance(word1, pos1, word2, pos2)
            score = 0.0 if d is None else self.decay**d
        self._sim[key] = score
        return score
