"""Well-formed chunk tag sequences, on by default for a sequence task whose tags are chunk
tags: :class:`WellFormedTags`, the part of the ``chunk`` and ``sequence`` tasks that decides
and keeps them.

A task whose training tags are written in one chunk scheme (``B-PER I-PER O`` in IOB2, or
IOB1, IOE1/2, BIOES: ``tasks.sequence.encodings``) decodes only the scheme's well-formed
sequences (no ``I-PER`` after ``O``), in every decoder, training included, when every
training sentence is one (``constrained="auto"``); tags of no chunk scheme (POS tags,
``sunny``) leave the chain as it is.  The decision is ``constrained_``, saved with the
model.
"""

from __future__ import annotations

from ...exceptions import InputError, ModelFormatError, warn_user
from ...featurizers.targets import SequenceLabelEncoder
from ...params import BOOL, Options
from ..base import Dataset
from .chunk_metrics import detect_tag_scheme
from .encodings import ENCODINGS, well_formed_constraints

__all__ = ["WellFormedTags", "CONSTRAINED_PARAMETER", "SCHEMES"]

#: the ``constrained`` parameter's check
CONSTRAINED_PARAMETER = {"constrained": [Options("auto"), BOOL]}
#: the chunk schemes a model file may name
SCHEMES = tuple(ENCODINGS)


class WellFormedTags:
    """Mixin of a sequence task (before ``SequenceLabellingTask`` in its bases) with a
    ``constrained`` parameter ({"auto", True, False}).

    ``fit_tag_scheme(dataset)``, which ``fit`` calls after the base fit, records
    the training tags' scheme (``tag_scheme_``, None when they are not chunk tags) and
    whether the chain keeps to its well-formed sequences (``constrained_``): "auto" when
    every training sentence is well-formed (a warning says when one is not), True always
    (an ill-formed training sentence is an error naming it), False never.  With partial
    labels the label set is closed over the scheme's prefixes, so every sentence has a
    well-formed completion.
    """

    #: what the messages call a model of the task
    model_noun = "model"

    def fit(self, dataset: Dataset):
        """As :meth:`SequenceLabellingTask.fit`; then, with chunk tags (``B-PER``, ``I-PER``,
        ``O``), record their scheme and whether the chain keeps to its well-formed
        sequences (``constrained_``)."""
        super().fit(dataset)
        return self.fit_tag_scheme(dataset)

    def get_state(self):
        state, arrays = super().get_state()
        return {**state, **self.tag_scheme_state()}, arrays

    @classmethod
    def from_state(cls, params, state, arrays):
        task = super().from_state(params, state, arrays)
        return task.restore_tag_scheme(state)

    def fit_tag_scheme(self, dataset: Dataset):
        """Decide ``tag_scheme_`` and ``constrained_`` on the training data, and rebuild the
        structure with the scheme's constraints; returns self."""
        gold = [t for t in dataset.targets if t is not None]
        self.tag_scheme_ = detect_tag_scheme(gold)
        if (self.tag_scheme_ is not None and not dataset.labels  # a declared set is kept
                and any(t is None for tags in gold for t in tags)):
            self._complete_label_set()
        self.constrained_ = self._decide_constrained(gold, dataset.path)
        self._build_structure()  # with the constraints of the scheme
        return self

    def _complete_label_set(self) -> None:
        """With partial labels: every prefix of the scheme for each chunk type seen, and
        ``O``, join the label set.  A tag that is always hidden (a rare ``B-LST`` whose
        ``I-LST`` is known) is a label a well-formed completion may need: without it an
        ``I-LST`` could have no well-formed predecessor."""
        labels = set(self.labels_)
        prefixes = ENCODINGS[self.tag_scheme_].prefixes
        types = {t[2:] for t in labels if t != "O"}
        wanted = {f"{p}-{x}" for x in types for p in prefixes} | {"O"}
        if not wanted <= labels:
            self.target_encoder_ = SequenceLabelEncoder(classes=sorted(labels | wanted)).fit([])

    def _decide_constrained(self, gold, path) -> bool:
        """``constrained`` resolved on the training tags: "auto" keeps to the scheme's
        well-formed sequences when every training sentence is one, True insists on it."""
        if self.constrained is False:
            return False
        scheme = self.tag_scheme_
        if scheme is None:
            if self.constrained is True:
                raise InputError("constrained=True needs the training tags' chunk scheme, and "
                                 "it could not be told (no chunk, or tags of no single scheme); "
                                 "pass constrained=False", path)
            return False
        bad = self._first_ill_formed(gold)
        if bad is None:
            return True
        i, what = bad
        if self.constrained is True:
            raise InputError(
                f"training sentence {i} is not a well-formed {scheme.upper()} sequence "
                f"({what}), and constrained=True decodes only well-formed ones; rewrite the "
                f"tags well-formed (tasks.sequence.encodings.convert(tags, {scheme!r}, "
                f"{scheme!r})) or pass constrained=False", path)
        warn_user(f"training sentence {i} is not a well-formed {scheme.upper()} sequence "
                  f"({what}), so the {self.model_noun} decodes without the scheme's "
                  f"constraints (constrained='auto'); pass constrained=False to silence this, "
                  f"or rewrite the tags well-formed to decode only well-formed sequences",
                  UserWarning)
        return False

    def _first_ill_formed(self, gold) -> tuple[int, str] | None:
        """The first sentence of ``gold`` (tag lists) that is not well-formed in the
        training scheme, as (index, what is wrong and where), or None."""
        constraints = well_formed_constraints(self.labels_, self.tag_scheme_)
        index = {label: k for k, label in enumerate(self.labels_)}
        for i, tags in enumerate(gold):
            # a tag the model lacks is encode_targets' error, said where it is met
            if any(t is not None and t not in index for t in tags):
                continue
            # an unknown tag (None, partial labels) breaks no rule: a decoder completes it
            bad = constraints.first_violation([-1 if t is None else index[t] for t in tags])
            if bad is None:
                continue
            t, kind = bad
            return i, {"start": f"{tags[t]!r} first", "end": f"{tags[t]!r} last"}.get(
                kind, f"{tags[t]!r} after {tags[t - 1]!r}") + f" at token {t}"
        return None

    def training_targets(self, dataset: Dataset) -> list:
        """The encoded gold tags of a batch to train on.  A constrained model
        (``constrained_``) refuses an ill-formed sentence in a later batch
        (``partial_fit``, ``train --resume``) as ``fit`` decided on the first: its decoder
        cannot write that sequence, so the CRF's likelihood of it would be unbounded.  The
        task's ``rules`` are checked too (``SequenceLabellingTask.training_targets``)."""
        targets = super().training_targets(dataset)
        if getattr(self, "constrained_", False):
            bad = self._first_ill_formed([t for t in dataset.targets if t is not None])
            if bad is not None:
                i, what = bad
                scheme = self.tag_scheme_.upper()
                raise InputError(
                    f"training sentence {i} of this batch is not a well-formed {scheme} "
                    f"sequence ({what}), and the {self.model_noun} decodes only well-formed "
                    f"ones (constrained_ was decided on its first training data); rewrite the "
                    f"tags well-formed (tasks.sequence.encodings.convert) or train a new model "
                    f"with constrained=False", dataset.path)
        return targets

    def own_constraints(self):
        """The well-formed sequences of the training tag scheme when ``constrained_``
        (``encodings.well_formed_constraints``), else None."""
        if not getattr(self, "constrained_", False):
            return None
        return well_formed_constraints(self.labels_, self.tag_scheme_)

    # --- persistence ------------------------------------------------------------------------
    def tag_scheme_state(self) -> dict:
        """``tag_scheme`` and ``constrained``, for the task's ``get_state``."""
        return {"tag_scheme": getattr(self, "tag_scheme_", None),
                "constrained": bool(getattr(self, "constrained_", False))}

    def restore_tag_scheme(self, state: dict):
        """Set ``tag_scheme_`` and ``constrained_`` from a model file's task state (checked)
        and rebuild the structure; returns self.  A file from before they were saved
        decodes freely, as it did."""
        scheme = state.get("tag_scheme")
        if scheme is not None and scheme not in SCHEMES:
            raise ModelFormatError(f"unknown chunk tag scheme {scheme!r} in the model file")
        constrained = state.get("constrained", False)
        if not isinstance(constrained, bool) or (constrained and scheme is None):
            raise ModelFormatError(f"the model file says constrained={constrained!r} with tag "
                                   f"scheme {scheme!r}; expected a bool, and a scheme when "
                                   f"true. The file is damaged or edited: retrain the model")
        self.tag_scheme_, self.constrained_ = scheme, constrained
        self._build_structure()  # with the constraints of the scheme
        return self
