"""What the online learners share for incremental learning (``partial_fit``).

The structured perceptron, online latent passive-aggressive learning, the mini-batch SGD
structural SVM and CRFsuite's online learners (``pa``, ``arow``: ``online_steps``) learn by
passes over their examples, each pass continuing from the state the
previous one left: the current weights, the averaging accumulator, the step counter that
the averaging or the step-size schedule uses, and the random generator of the visiting
order.  :class:`OnlineState` holds that state; ``fit`` leaves it on the learner, and each
``partial_fit(X, Y)`` call runs one more pass over the batch it is given, from it.

Model files keep the state (``OnlineLearnerMixin._learned_state``), so a saved model of an
online learner continues training exactly where it stopped (``latentstruct train --resume
MODEL``): weights and accumulators as arrays, counters and the random generator's state as
JSON (never pickle).

The feature space is the task's, fixed by ``task.fit``: a batch is featurised by the same
fitted task, attributes never seen when the task was fitted have no weight, and a task
fitted again between calls (another feature index) is refused.  A task with
``feature_index="hashing"`` has a fixed-size feature space in which every attribute has a
weight, so a stream with new attributes should use it.

Which weights train is fixed with the state too (``support_``, :mod:`~latentstruct.
learners.feature_support`): every feature (``feature_set="all"``) or CRFsuite's set, the
features of the first training data's gold structures; an update never moves the others.

A structure may run a whole pass compiled (``online_batch``/``online_pass``, the
:class:`~latentstruct.tasks.contracts.CompiledOnline` batch form; a chain does): the
learner hands it the code of its update rule (:mod:`~latentstruct.solvers.online_rules`),
the same rule its Python loop applies,
so both paths make the same updates in the same order (to rounding: a dot product may sum
in another order).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...data.sparse import SparseVector
from ...exceptions import ConfigError, ModelFormatError, NotFittedError
from ...tasks.contracts import Structure
from ..checkpoint_state import rng_from_state, rng_state
from ..feature_support import feature_support, restore_support, save_support, support_mask

__all__ = ["OnlineState", "OnlineLearnerMixin", "visiting_order", "online_learner_names",
           "EMPTY"]

#: what a compiled rule receives for a state array the learner does not keep
EMPTY = np.zeros(0)


def visiting_order(rng: np.random.Generator, n: int, shuffle: bool) -> np.ndarray:
    """One pass's order of ``n`` examples: ``rng.permutation(n)``, or ``0..n-1`` (nothing
    drawn) when ``shuffle`` is False."""
    return rng.permutation(n) if shuffle else np.arange(n)


@dataclass
class OnlineState:
    """The state one online pass continues from and leaves.

    w : current weight vector (for the SGD structural SVM the unscaled vector v, the
        weights being ``scale * v``); u : the averaging accumulator (None without
        averaging); scale : see ``w``; step : steps made so far (the counter of the
        averaging or of the step-size schedule, ``t_``); rng : the visiting order's
        generator; counters : learner-specific counts (updates, capped visits, ...);
        arrays : learner-specific vectors of ``len(w)`` floats that the next pass needs
        (AROW's diagonal covariance), saved in model files as ``online.<name>``.
    """

    w: np.ndarray
    rng: np.random.Generator
    u: np.ndarray | None = None
    scale: float = 1.0
    step: int = 0
    counters: dict = field(default_factory=dict)
    arrays: dict = field(default_factory=dict)


def online_learner_names() -> list[str]:
    """Registered learners that can continue training (they have ``partial_fit``)."""
    from ..base import LEARNERS

    return sorted(name for name, cls in LEARNERS.items() if hasattr(cls, "partial_fit"))


class OnlineLearnerMixin:
    """``partial_fit`` support shared by the online learners (put before the learner base).

    A learner keeps its :class:`OnlineState` in ``_online`` (set by ``fit`` and by the first
    ``partial_fit``); this mixin checks a batch's task and saves and restores the state in
    model files (``w`` only where it differs from ``coef_``: without averaging they are the
    same vector, stored once).
    """

    _online = None
    support_ = None
    _mask = None

    # --- the trained weights --------------------------------------------------------------
    def _fix_support(self, structure, X, Y) -> None:
        """``support_`` for a run starting afresh on ``X``, ``Y`` (``feature_set`` and the
        two ``possible_*`` choices), and its byte mask."""
        self.support_ = feature_support(structure, X, Y, self.feature_set,
                                        bool(self.possible_states),
                                        bool(self.possible_transitions))
        self._mask = support_mask(self.support_, structure.n_features)

    def _support_mask(self, n: int) -> np.ndarray:
        if self._mask is None or (self._mask.size and self._mask.size != n):
            self._mask = support_mask(self.support_, n)
        return self._mask

    def _restricted(self, delta: SparseVector, n: int) -> SparseVector:
        """``delta`` without the weights outside ``support_`` (which stay zero)."""
        mask = self._support_mask(n)
        if not mask.size:
            return delta
        keep = mask[delta.indices].astype(bool)
        return SparseVector(delta.indices[keep], delta.values[keep])

    # --- the compiled pass ----------------------------------------------------------------
    def _compiled_batch(self, structure, X, Y):
        """The structure's prepared batch for a compiled pass over ``X``, ``Y``, or None
        where it offers none for them (no compiled form, partial labels, constraints its
        compiled decoder does not keep): the Python loop runs then."""
        prepare = getattr(structure, "online_batch", None)
        if prepare is None or self._unknown_parts(structure, Y):
            return None
        return prepare(X, Y)

    def _run_compiled(self, structure, batch, order, state, monitor, rule, params, u, extra):
        """One compiled pass over ``batch`` in ``order`` with the update ``rule``; the
        pass's statistics (``cost``, ``errors``, ``rate``, ``n_updates``), the step counter
        advanced, and the decoder checked as the Python loop checks it."""
        stats = structure.online_pass(batch, state.w, np.asarray(order, np.int64), rule,
                                      np.asarray(params, np.float64), u, extra,
                                      self._support_mask(state.w.shape[0]), state.step,
                                      bool(self.check_inference))
        state.step = int(stats["steps"])
        if stats["first_inconsistent"] >= 0:
            monitor.consistent(stats["reported"], stats["recomputed"], "argmax",
                               int(stats["first_inconsistent"]))
        return stats

    def _partial_fit_task(self) -> Structure:
        """The learner's task, checked for a ``partial_fit`` call: fitted, and with the
        feature space the state was built on."""
        name = type(self).__name__
        if self.structure is None:
            raise ConfigError(f"{name}.partial_fit needs a structure (a fitted task) as its "
                              f"'structure' parameter")
        try:
            self._structure()  # a task gives its view only once fitted
        except NotFittedError:
            raise ConfigError(
                f"{name}.partial_fit needs a fitted task: its feature index is fixed by "
                f"task.fit(dataset) before the first batch, so that every batch is featurised "
                f"in the same feature space. Call task.fit on a first sample of the data (or "
                f"use feature_index='hashing', whose space holds any attribute) and featurise "
                f"each batch with that task") from None
        structure = self._check_structure()
        state = self._online
        if state is not None and state.w.shape != (self.coef_size(structure),):
            raise ConfigError(
                f"{name}.partial_fit: the model has {state.w.shape[0]} weights but the task now "
                f"defines {self.coef_size(structure)} features: the task was fitted again (or "
                f"replaced) since training began, which changes the feature space. Keep the "
                f"task of the first call (featurise new batches with it), or train afresh with "
                f"fit; a task with feature_index='hashing' sees new attributes without refitting")
        return structure

    # --- persistence -------------------------------------------------------------------
    def _learned_state(self):
        meta, arrays = super()._learned_state()
        save_support(meta, arrays, self.support_)
        state = self._online
        if state is None:
            return meta, arrays
        meta["online"] = {"step": int(state.step), "scale": float(state.scale),
                          "rng": rng_state(state.rng),
                          "counters": {k: int(v) for k, v in state.counters.items()},
                          "average": state.u is not None, "t_": int(self.t_),
                          "w_is_coef": bool(np.array_equal(state.w, self.coef_))}
        if state.arrays:  # absent where there are none, as in files written before
            meta["online"]["arrays"] = sorted(state.arrays)
            arrays.update({f"online.{k}": v for k, v in state.arrays.items()})
        if not meta["online"]["w_is_coef"]:
            arrays["online.w"] = state.w
        if state.u is not None:
            arrays["online.u"] = state.u
        return meta, arrays

    def _restore(self, meta, arrays):
        super()._restore(meta, arrays)
        self.support_ = restore_support(meta, arrays, self.coef_.shape[0])
        self._mask = None
        online = meta.get("online")
        self._online = None
        if online is None:  # a model file written before partial_fit existed
            return
        n = self.coef_.shape[0]
        w = self.coef_.copy() if online["w_is_coef"] else _state_array(arrays, "w", n)
        u = _state_array(arrays, "u", n) if online["average"] else None
        self._online = OnlineState(w=w, u=u, scale=float(online["scale"]),
                                   step=int(online["step"]), rng=rng_from_state(online["rng"]),
                                   counters={k: int(v) for k, v in online["counters"].items()},
                                   arrays={k: _state_array(arrays, k, n)
                                           for k in online.get("arrays", [])})
        self.t_ = int(online["t_"])

    def _continued_state(self) -> OnlineState | None:
        """The state a ``partial_fit`` call continues from: None before any training (the
        call starts afresh), else the state ``fit`` or the last call left; a clear error for
        a model that has weights but no state."""
        if getattr(self, "coef_", None) is None:
            return None
        if self._online is None:
            raise ConfigError(
                f"this {type(self).__name__} has weights but no online training state (it "
                f"was loaded from a model file written before partial_fit existed), so its "
                f"training cannot continue exactly; retrain it with fit or partial_fit")
        return self._online


def _state_array(arrays: dict, name: str, n: int) -> np.ndarray:
    key = f"online.{name}"
    if key not in arrays:
        raise ModelFormatError(f"the model's online training state lacks the array {key!r}; "
                               f"the file is damaged. Retrain the model.")
    a = arrays[key]
    if a.dtype not in (np.float32, np.float64) or a.shape != (n,) or not np.isfinite(a).all():
        raise ModelFormatError(
            f"the model's online training state array {key!r} has dtype {a.dtype} and shape "
            f"{a.shape}; expected {n} finite floats (as coef_). The file is damaged. Retrain "
            f"the model.")
    return np.asarray(a, dtype=np.float64).copy()
