"""Predicted POS tags for the dependency task (``pos="predicted"``).

The task never loads or trains a tagger itself: like ``grammaticality``, it offers
``set_tagger`` / ``needs_tagger`` / ``has_tagger`` and
:func:`latentstruct.pipelines.attach_tagger` (called by ``latentstruct train``) attaches the
``pos`` model file given as ``tagger_model`` or, without one, the default tagger trained on
``tagger_sentences`` sentences of UD EWT.  The tagger is saved inside the ``dep`` model, so
a trained parser tags new text the same way.  Training sentences are tagged by a tagger
that may have seen them (no jackknifing), so training tags are more accurate than test tags.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...exceptions import ConfigError, ModelFormatError
from ..base import Dataset
from ..sequence.pos import PosTask, check_tagger

__all__ = ["TaggerMixin"]

_TAG_BATCH = 2000


@dataclass(frozen=True)
class _Words:
    words: tuple


class TaggerMixin:
    """``set_tagger`` and friends for a task with parameters ``pos``, ``tagger_model`` and
    ``tagger_sentences``."""
    pretrained_helpers = frozenset({"pos-tagger"})  # attached by pipelines.training

    def set_tagger(self, pos_task: PosTask, coef: np.ndarray):
        """Use a fitted ``PosTask`` with weights ``coef`` as the UPOS tagger."""
        self.tagger_coef_ = check_tagger(pos_task, coef)
        self.tagger_ = pos_task
        return self

    def has_tagger(self) -> bool:
        """Whether the task has the POS tags it needs: always with ``pos="gold"``, else when
        a tagger is attached (``set_tagger``, or loaded with the model)."""
        return self.pos == "gold" or getattr(self, "tagger_", None) is not None

    @property
    def needs_tagger(self) -> bool:
        """True when ``pos="predicted"``, no tagger is attached and ``tagger_model`` is None:
        the training pipeline then trains the default one.  Checks the parameters first."""
        self.check_params()
        return not self.has_tagger() and self.tagger_model is None

    def tag(self, sentences) -> list[tuple]:
        """UPOS tags of tokenized sentences (sequences of words) from the attached tagger."""
        if getattr(self, "tagger_", None) is None:
            where = ("" if self.tagger_model is None else
                     f" (tagger_model={self.tagger_model!r} is given but not loaded)")
            raise ConfigError(
                f"pos='predicted' needs a POS tagger{where}: call "
                "latentstruct.pipelines.attach_tagger(task) or set_tagger before featurize")
        pos_task, coef = self.tagger_, self.tagger_coef_
        out: list[tuple] = []
        for a in range(0, len(sentences), _TAG_BATCH):
            chunk = [_Words(tuple(s)) for s in sentences[a:a + _TAG_BATCH]]
            X = pos_task.featurize(Dataset(chunk, [None] * len(chunk)))
            out.extend(tuple(t) for t in pos_task.decode_targets(pos_task.argmax_batch(X, coef)))
        return out

    def _tagger_state(self, state: dict, arrays: dict) -> None:
        if self.pos != "predicted":
            return
        if getattr(self, "tagger_", None) is None:
            raise ConfigError("cannot save a dep model with pos='predicted' without its tagger; "
                              "call set_tagger (or pipelines.attach_tagger) before fit")
        t_state, t_arrays = self.tagger_.get_state()
        state["tagger_params"] = self.tagger_.get_params()
        state["tagger_state"] = t_state
        arrays.update({"tagger_" + k: v for k, v in t_arrays.items()})
        arrays["tagger_coef"] = self.tagger_coef_

    def _restore_tagger(self, state: dict, arrays) -> None:
        if self.pos != "predicted":
            return
        try:
            t_arrays = {k[len("tagger_"):]: v for k, v in arrays.items()
                        if k.startswith("tagger_")}
            pos_task = PosTask.from_state(state["tagger_params"], state["tagger_state"], t_arrays)
            self.set_tagger(pos_task, arrays["tagger_coef"])
        except KeyError as exc:
            raise ModelFormatError(
                f"dep model with pos='predicted' lacks its tagger: {exc}") from None
