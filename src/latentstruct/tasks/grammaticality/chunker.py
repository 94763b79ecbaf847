"""The supervised chunker of the grammaticality task's heuristic weights (Clifton et al.
2013, §4): its training problem, its training data, and its weights.

:class:`SupervisedChunker` is a mixin of
:class:`~latentstruct.tasks.grammaticality.GrammaticalityTask`.  The task offers the
problem (``chunking_task()``, a :class:`~latentstruct.tasks.grammaticality.ChunkingView`,
and ``chunk_training_data()``); :func:`latentstruct.pipelines.train_chunker` trains it and
attaches the weights with ``set_chunker_weights``.
"""

from __future__ import annotations

import numpy as np

from ...data.paths import dataset_path
from ...data.readers import read_conll2000
from ...exceptions import ConfigError, InputError
from ..sequence.corpus import SequenceCorpus
from ..sequence.encodings import convert
from .decoding import ChunkingView
from .sentences import Sentence

__all__ = ["SupervisedChunker"]


class SupervisedChunker:
    """The heuristic weights of the task: a supervised chunker (module docstring)."""

    def chunking_task(self) -> "ChunkingView":
        """The supervised chunking problem in this task's feature space (a max-decodable
        ``ChunkingView``), for training the chunker of ``heuristic_weights``."""
        self.check_fitted()
        return ChunkingView(self)

    def chunk_training_data(self) -> tuple[SequenceCorpus, list[np.ndarray]]:
        """``(X, Y)`` of ``chunking_task()``: the first ``chunker_sentences`` sentences of
        ``chunker_corpus`` (CoNLL-2000), tagged by this task's POS tagger and featurised with
        its templates, and their gold chunkings written in every view's encoding (int
        arrays (n_views, T)).  ``InputError`` (file:line) for a chunk type outside
        ``chunk_types``."""
        self.check_fitted()
        self.check_params()
        path = self.chunker_corpus or dataset_path("conll2000", "train.txt")
        sents = read_conll2000(path)[: int(self.chunker_sentences)]
        known = set(self.chunk_types_)
        records, gold = [], []
        for s in sents:
            types = {t[2:] for t in s.tags if t != "O"}
            if not types <= known:
                raise InputError(
                    f"chunk types {sorted(types - known)} are not among chunk_types "
                    f"{sorted(known)}", str(path), s.line)
            records.append(Sentence(s.words))
            gold.append(np.array([[self._label_ids[k][t] for t in convert(s.tags, "iob2", v.name)]
                                  for k, v in enumerate(self.views_)], dtype=np.int64))
        if not records:
            raise InputError("the chunker corpus contains no sentences", str(path))
        X = self._featurize_records(records, self.tag([r.words for r in records]))
        return X, gold

    def set_chunker_weights(self, coef) -> SupervisedChunker:
        """Attach a supervised chunker's weights (shape ``(n_features,)``, in the layout of
        ``chunking_task()``) as ``heuristic_weights``."""
        self.check_fitted()
        coef = np.array(coef, dtype=np.float64)
        if coef.shape != (self.n_features,):
            raise ConfigError(
                f"chunker weights must have shape ({self.n_features},) -- this task's "
                f"n_features -- got {coef.shape}; train them with "
                "latentstruct.pipelines.train_chunker(task) after fit"
            )
        if not np.all(np.isfinite(coef)):
            raise ConfigError("chunker weights must be finite")
        self.chunker_coef_ = coef
        return self

    def heuristic_ready(self) -> bool:
        """Whether ``heuristic_weights()`` is available (chunker weights are attached)."""
        return self.is_fitted() and getattr(self, "chunker_coef_", None) is not None

    def heuristic_weights(self) -> np.ndarray:
        """The supervised chunker's weights (unscaled, bias 0), attached by
        :func:`latentstruct.pipelines.train_chunker` or ``set_chunker_weights``."""
        self.check_fitted()
        if getattr(self, "chunker_coef_", None) is None:
            raise ConfigError(
                "this grammaticality task has no supervised chunker to initialise from (the "
                "learner asks for heuristic_weights: LCLR / lclr-variant with "
                "init=two-stage, two-stage, or latent-pa with init=heuristic). In code, call "
                "latentstruct.pipelines.train_chunker(task) after task.fit; `latentstruct "
                "train` trains it unless chunker=None (leave chunker=auto or set "
                "chunker=perceptron); or initialise the learner from zeros (init=zeros)"
            )
        return self.chunker_coef_.copy()

    # ------------------------------------------------------------------------------------
