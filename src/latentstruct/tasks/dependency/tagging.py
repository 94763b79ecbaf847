"""Predicted POS tags for the dependency task (``pos="predicted"``).

The task never loads or trains a tagger itself: like ``grammaticality``, it offers
``set_tagger`` / ``needs_tagger`` / ``has_tagger`` (it declares the ``pos-tagger`` helper) and
:func:`latentstruct.pipelines.attach_tagger` (called by ``latentstruct train``) attaches the
``pos`` model file given as ``tagger_model`` or, without one, the default tagger trained on
``tagger_sentences`` sentences of UD EWT.  The tagger is saved inside the ``dep`` model, so
a trained parser tags new text the same way.  Training sentences are tagged by a tagger
that may have seen them (no jackknifing), so training tags are more accurate than test tags.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...exceptions import ModelFormatError
from ..base import Dataset
from ..sequence.pos import PosTask, check_tagger

__all__ = ["UposTagger"]

_TAG_BATCH = 2000


@dataclass(frozen=True)
class _Words:
    words: tuple


class UposTagger:
    """A fitted ``PosTask`` with its weights ``coef``: the UPOS tagger of ``pos="predicted"``.

    :class:`~latentstruct.tasks.dependency.featurizer.DependencyFeaturizer` holds one (its
    ``tagger``) and calls :meth:`tag`; the task saves it inside its model file
    (:meth:`save`, :meth:`restore`).
    """

    def __init__(self, pos_task: PosTask, coef: np.ndarray):
        self.coef = check_tagger(pos_task, coef)
        self.pos_task = pos_task

    def tag(self, sentences) -> list[tuple]:
        """UPOS tags of tokenized sentences (sequences of words)."""
        pos_task, coef = self.pos_task, self.coef
        out: list[tuple] = []
        for a in range(0, len(sentences), _TAG_BATCH):
            chunk = [_Words(tuple(s)) for s in sentences[a:a + _TAG_BATCH]]
            X = pos_task.featurize(Dataset(chunk, [None] * len(chunk)))
            out.extend(tuple(t) for t in pos_task.decode_targets(
                pos_task.structure_.argmax_batch(X, coef)))
        return out

    def save(self, state: dict, arrays: dict) -> None:
        """Add the tagger to a model's ``state`` and ``arrays`` (keys ``tagger_*``)."""
        t_state, t_arrays = self.pos_task.get_state()
        state["tagger_params"] = self.pos_task.get_params()
        state["tagger_state"] = t_state
        arrays.update({"tagger_" + k: v for k, v in t_arrays.items()})
        arrays["tagger_coef"] = self.coef

    @classmethod
    def restore(cls, state: dict, arrays) -> "UposTagger":
        """The tagger :meth:`save` put in ``state`` and ``arrays``; ``ModelFormatError``
        when it is missing."""
        try:
            t_arrays = {k[len("tagger_"):]: v for k, v in arrays.items()
                        if k.startswith("tagger_")}
            pos_task = PosTask.from_state(state["tagger_params"], state["tagger_state"], t_arrays)
            return cls(pos_task, arrays["tagger_coef"])
        except KeyError as exc:
            raise ModelFormatError(
                f"dep model with pos='predicted' lacks its tagger: {exc}") from None
