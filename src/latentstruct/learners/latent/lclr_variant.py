"""The "LCLR-variant" baseline of Clifton, Whitney & Sarkar (2013, footnote 1): LCLR's loop
with one cutting-plane round per outer iteration, optionally with its number of outer
iterations chosen on a validation split (early stopping), and the validation run's own
model kept (``refit=False``) or trained again on all the data (``refit=True``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace

import numpy as np
from sklearn.model_selection import train_test_split

from ...exceptions import ConfigError, warn_user
from .alternating import AlternatingResult, alternating_latent_fit, store_alternating_result
from ..base import register_learner
from .lclr import LCLR, LCLR_CONSTRAINTS, POSITIVE
from ..params import BOOL, PASSES, Interval

__all__ = ["LCLRVariant", "choose_iteration", "choosable_iterations", "accuracy_floor"]

#: a fraction strictly between 0 and 1
FRACTION = Interval(float, 0, 1, closed="neither")


@register_learner("lclr-variant")
class LCLRVariant(LCLR):
    """The "LCLR-variant" baseline of Clifton et al. (2013, footnote 1).

    Same objective as ``LCLR`` (LCLR Eq. 3, squared hinge, C = 1/lambda)::

        min_w  1/2 ||w||^2 + C sum_i max(0, 1 - y_i max_{h in C(x_i)} w . Phi(x_i, h))^2

    and the same loop -- ``alternating_latent_fit``, LCLR Algorithm 1 with Algorithm 2
    inside, caches and duals kept across outer iterations -- but the inference step of the
    inner loop is skipped: each outer iteration decodes the positives (latent completion) and
    the negatives once, at the weights of the outer loop, adds the negatives' argmaxes to
    their caches, and solves the problem restricted to the caches (LCLR Eq. 5) with the
    grouped DCD, warm-started from the previous iteration's duals; then the next outer
    iteration decodes again.  That is exactly one cutting-plane round per outer iteration,
    so ``max_cutting_plane_rounds`` is fixed to 1.  (The paper's baselines use a PA
    large-margin classifier in the inner loop; ours use the squared-hinge SVM.)

    Each restricted solve stops at the DCD's projected-gradient tolerance ``dcd_tol`` or,
    when ``dcd_gap_tol`` is set and whichever comes first, once its relative duality gap is
    below ``dcd_gap_tol``.  Looser solves are much cheaper (with many cached structures
    sharing a slack the 1e-3 rule takes 1,000+ epochs per late solve) but the loop then
    settles at a higher objective: on grammaticality with 2,000 + 2,000 sentences
    ``dcd_tol=1e-2`` took a fifth of the time and lost 0.7 points of held-out accuracy
    (docs/performance.md), so the default stays LCLR's 1e-3.

    Without the inner re-decoding, the negatives' structures are not maximised again within
    an outer iteration, so the objective may increase from one outer iteration to the next
    (LCLR's Theorem 1 does not apply, and is not checked) and LCLR's stopping rule -- stop at
    the first iteration that improves the objective by less than ``tol`` -- would stop at
    the first increase.  The variant instead stops once the objective has stalled: after
    three consecutive outer iterations that each changed it by less than ``tol`` (relative,
    up or down); or at a fixed point (an iteration that changed no structure and no cache);
    or after ``max_iter`` outer iterations (the paper runs 40).  ``tol=None`` runs
    ``max_iter`` iterations unless a fixed point comes first.

    ``check_inference`` checks statuses and scores as in LCLR, but not Theorem 1.

    **Early stopping.** Held-out accuracy need not follow the objective: on grammaticality
    it peaks after 10-14 outer iterations and then falls by about a point while the
    objective keeps moving (the paper notes that LCLR "severely overfits" this task).  With
    ``early_stopping=True`` the number of outer iterations is chosen on a validation split:
    a stratified, seeded ``validation_fraction`` of the training examples is held out, the
    loop runs on the rest and measures, on the held-out part after every outer iteration,
    the training loss (the mean squared hinge) and the accuracy.  The run stops once
    ``n_iter_no_change`` iterations in a row have neither lowered the best loss nor raised
    the best accuracy.  The iteration kept (:func:`choose_iteration`) is the one of lowest
    loss among those whose accuracy is within one binomial standard error,
    ``sqrt(a(1-a)/n_val)``, of the best accuracy ``a``.  The loss ranks them: it is the
    quantity the learner minimises, and it is smooth where the accuracy of a few hundred
    held-out examples is not (its standard error, about two points at 400 examples, exceeds the
    accuracy's whole variation after the first ten iterations on grammaticality, so an
    accuracy argmax picks almost at random).  The accuracy floor keeps the loss from
    choosing a model that is clearly worse: the squared hinge weighs how far off the scores
    are, not how many signs are right.  From ``init="zeros"`` on 20,000 + 20,000
    grammaticality sentences it was lowest after the first iteration, whose scores are
    inflated by the maximum over structures no cache held, so that its model calls almost
    every sentence real; the next iterations' scores swung further before the negatives'
    caches caught up (issue 41: 53.6 % held-out against 75.2 % with
    ``early_stopping=False``; results/grammaticality_early_stopping.md).  Keeping the first
    iteration of a validation run that had not converged there (it stopped on the validation
    rule or at ``max_iter``) warns (``UserWarning``).

    What is kept then depends on ``refit``.  With ``refit=False``, the default
    (scikit-learn's ``early_stopping`` never refits either), the model is the validation
    run's own at the chosen iteration: bit for bit the model of a run on the training part
    with ``max_iter=best_iteration_``, with that run's fitted attributes (``coef_``,
    ``n_iter_``, the curves and counters), so the fit costs the validation run only.  While
    the run goes on it keeps a copy of the loop's result only for the iterations that can
    still be chosen (:func:`choosable_iterations`: not below the accuracy floor, which only
    rises, and not beaten on both accuracy and loss by another iteration), usually a
    handful.  With ``refit=True`` the model is trained again on all the examples for the
    chosen iteration's number of outer iterations (the other stopping rules still apply),
    so no training example is lost to the validation split, at the price of a second run
    (on 20,000 + 20,000 grammaticality sentences, 1.78 times the CPU time of a fit without
    early stopping).  Resuming from a checkpoint with ``refit=False`` continues the
    validation run (its checkpoints hold its curves and kept models too); with
    ``refit=True`` it runs the (deterministic) validation run again and continues the
    final run.

    The parameters are those of ``LCLR`` except ``max_cutting_plane_rounds`` and
    ``epsilon``, and the following, whose meaning differs here or which LCLR lacks.

    Parameters
    ----------
    tol : float or None, default 1e-3
        Relative change of the objective below which an outer iteration counts as stalled;
        three stalled iterations in a row end training.
    dcd_tol : float, default 1e-3
        Projected-gradient tolerance of each restricted solve.
    dcd_gap_tol : float or None, default None
        Relative duality gap at which a restricted solve stops as well (None: ``dcd_tol``
        only; each check of the gap is one pass over the cache).
    early_stopping : bool, default False
        Choose the number of outer iterations on a held-out part of the training data (see
        "Early stopping").  The grammaticality task turns it on by default.
    validation_fraction : float in (0, 1), default 0.1
        Share of the training examples held out when ``early_stopping``.
    n_iter_no_change : int, default 5
        Outer iterations without a lower validation loss or a higher validation accuracy
        that end the validation run.
    refit : bool, default False
        With ``early_stopping``: keep the validation run's model at the chosen iteration
        (False: one run, on ``1 - validation_fraction`` of the examples), or train again on
        all the examples for the chosen number of outer iterations (True: two runs).  On
        grammaticality (2,000 and 5,000 + as many sentences, two seeds each) refit=True
        took 1.5-1.9 times the CPU time for held-out accuracy within -0.3 to +0.6 points of
        refit=False's, inside the two seeds' spread (results/grammaticality_early_stopping.md).
        Ignored without ``early_stopping``.
    random_state : int, None or Generator, default 0
        Seeds the DCD's visiting order, the random tie-breaking and the validation split.

    Attributes
    ----------
    coef_, n_iter_, fit_time_
    converged_ : whether training stopped at a stall (``stop_reason_ == "tol"``) or at a
        fixed point (``"fixed_point"``, where every later iteration would solve the same
        restricted problem again) rather than at ``max_iter``
    stop_reason_ : "tol", "fixed_point", "max_iter" or, with ``early_stopping``, "validation"
        (the model is that of ``best_iteration_`` outer iterations, and no other rule
        stopped its run there)
    validation_loss_curve_ : mean squared hinge of the validation part after each outer
        iteration of the validation run (empty without ``early_stopping``)
    validation_scores_ : its accuracy after each of them
    validation_accuracy_floor_ : the best validation accuracy less one binomial standard
        error; only iterations at or above it could be chosen (None without
        ``early_stopping``)
    best_iteration_ : the outer iteration of the lowest validation loss among those at or
        above the accuracy floor (the first, on ties): the final run stops there
        (``refit=True``), or the model is the validation run's after it (``refit=False``);
        None without ``early_stopping``
    objective_curve_ : Eq. (3) objective at the initial weights and after each outer iteration
    cache_size_curve_ : cached negative structures after each outer iteration
    n_cache_hits_ : negative argmaxes that were already cached
    """

    _parameter_constraints = {**LCLR_CONSTRAINTS, "tol": [POSITIVE, None],
                              "dcd_gap_tol": [POSITIVE, None], "early_stopping": [BOOL],
                              "validation_fraction": [FRACTION], "refit": [BOOL],
                              # extra outer iterations: bounded like max_iter
                              "n_iter_no_change": [PASSES]}

    def __init__(
        self,
        structure=None,
        C=1.0,
        tol=1e-3,
        max_iter=50,
        dcd_tol=1e-3,
        dcd_gap_tol=None,
        dcd_max_iter=2000,
        early_stopping=False,
        validation_fraction=0.1,
        n_iter_no_change=5,
        refit=False,
        init="two-stage",
        coef_init=None,
        random_tie_break=False,
        check_inference=True,
        n_jobs=1,
        random_state=0,
        progress=False,
    ):
        super().__init__(structure=structure, C=C, tol=tol, max_iter=max_iter, max_cutting_plane_rounds=1,
                         dcd_tol=dcd_tol, dcd_max_iter=dcd_max_iter, init=init,
                         coef_init=coef_init, random_tie_break=random_tie_break,
                         check_inference=check_inference, n_jobs=n_jobs,
                         random_state=random_state, progress=progress)
        self.dcd_gap_tol = dcd_gap_tol
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.refit = refit

    def fit(self, X, y, *, checkpoint=None, resume=None):
        """Run the outer loop of LCLR with one cutting-plane round per outer iteration
        (``checkpoint``/``resume`` as for ``LCLR.fit``)."""
        structure, C, X, y, t_start, session = self._fit_start(X, y, checkpoint, resume)
        if self.early_stopping and not self.refit:
            if session.resuming and "after_iteration" not in session.state[0]:
                # a checkpoint of a final run on all the data, as every early-stopping fit
                # made before refit existed (they behaved as refit=True)
                raise ConfigError(
                    f"{type(self).__name__}: the checkpoint holds the final run of a "
                    "refit=True fit (so did every early-stopping checkpoint written before "
                    "refit existed), not a validation run; resume with refit=True "
                    "(--option refit=true), or train afresh")
            # one run: the validation run's own model at the iteration chosen (its checkpoints
            # carry the validation record and the kept models, so a resume continues it)
            record = self._validation_run(structure, X, y, C, session=session, keep=True)
            self.validation_loss_curve_, self.validation_scores_ = record.losses, record.scores
            self.best_iteration_, self.validation_accuracy_floor_ = record.best, record.floor
            store_alternating_result(self, record.chosen, t_start, fixed_schedule=True)
            if record.chosen.stop_reason == "max_iter":
                self.stop_reason_ = "validation"  # the iteration the validation rule chose
            return self
        max_iter = int(self.max_iter)
        losses, scores, best, floor = [], [], None, None
        if self.early_stopping:
            record = self._validation_run(structure, X, y, C)
            losses, scores, best, floor = record.losses, record.scores, record.best, record.floor
            max_iter = best
        w0 = None if session.resuming else self._initial_weights(structure, X, y)
        # LCLR's loop with one cutting-plane round per outer iteration (max_cutting_plane_rounds
        # is fixed to 1 by __init__) and the stall rule instead of Theorem 1's monotone stop.
        run, monitor = alternating_latent_fit(self, structure, X, y, C, w0, desc="lclr-variant",
                                              monotone=False, session=session,
                                              max_iter=max_iter)
        self.validation_loss_curve_, self.validation_scores_ = losses, scores
        self.best_iteration_, self.validation_accuracy_floor_ = best, floor
        store_alternating_result(self, run, t_start, monitor, fixed_schedule=True)
        if best is not None and run.stop_reason == "max_iter":
            self.stop_reason_ = "validation"  # the count the validation run chose
        return self

    def _validation_split(self, y) -> tuple[np.ndarray, np.ndarray]:
        """Indices of the training and validation parts: stratified by label, seeded."""
        n = y.shape[0]
        n_val = math.ceil(float(self.validation_fraction) * n)
        counts = [int(np.sum(y == label)) for label in (-1.0, 1.0)]
        if n_val < 2 or n - n_val < 2 or min(counts) < 2:
            raise ConfigError(
                f"early_stopping=True holds out validation_fraction={self.validation_fraction} "
                f"of the {n} training examples ({counts[1]} positive, {counts[0]} negative): "
                "too few to keep both labels on both sides; train on more examples, change "
                "validation_fraction, or set early_stopping=False")
        seed = int(np.random.default_rng(self.random_state).integers(np.iinfo(np.int32).max))
        train, val = train_test_split(np.arange(n), test_size=n_val, stratify=y,
                                      random_state=seed)
        return np.sort(train), np.sort(val)

    def _validation_run(self, structure, X, y, C, *, session=None,
                        keep=False) -> "_ValidationRecord":
        """Train on all but the validation split, scoring it after every outer iteration;
        return its loss and accuracy curves, the iteration chosen (:func:`choose_iteration`),
        the accuracy floor it was chosen under and, with ``keep``, the run's result at that
        iteration (only the iterations :func:`choosable_iterations` still admits are kept
        while the run goes on).  ``session`` checkpoints (and resumes) this run."""
        train, val = self._validation_split(y)
        X_val, y_val = structure.subset(X, val), y[val]
        tracker = _ValidationTracker(structure, X_val, y_val, int(self.n_iter_no_change), keep)
        X_train, y_train = structure.subset(X, train), y[train]
        resuming = session is not None and session.resuming
        w0 = None if resuming else self._initial_weights(structure, X_train, y_train)
        run, monitor = alternating_latent_fit(
            self, structure, X_train, y_train, C, w0, desc="lclr-variant (validation)",
            monotone=False, session=session, after_iteration=tracker,
            after_iteration_state=(tracker if (session is not None and session.active) or resuming
                                   else None))
        monitor.warn()
        losses, accuracies = tracker.losses, tracker.accuracies
        best, floor = choose_iteration(losses, accuracies, len(val))
        # (a run that reached a fixed point or stalled after its first iteration had
        # finished learning there: nothing to warn about)
        if best == 1 and len(losses) > 1 and run.stop_reason in ("validation", "max_iter"):
            top = int(np.argmax(accuracies))
            warn_user(
                f"{type(self).__name__}: early stopping chose the first outer iteration of "
                f"{len(losses)} (validation loss {losses[0]:.4g}, validation accuracy "
                f"{accuracies[0]:.3f} on {len(val)} held-out examples; best accuracy "
                f"{accuracies[top]:.3f} at iteration {top + 1}), so the model is trained for "
                "a single outer iteration, which is rarely a finished model; check "
                "validation_loss_curve_ and validation_scores_, and to train longer pass "
                "early_stopping=False with max_iter, or a larger n_iter_no_change",
                UserWarning)
        chosen = None
        if keep:
            if best not in tracker.kept:  # choosable_iterations pruned the one chosen: a bug
                raise RuntimeError(f"{type(self).__name__}: early stopping chose iteration "
                                   f"{best}, whose model was not kept (kept: "
                                   f"{sorted(tracker.kept)})")
            chosen = replace(tracker.kept[best], w_init=run.w_init)
        return _ValidationRecord(losses, accuracies, best, floor, chosen)

    def _learned_state(self):
        meta, arrays = super()._learned_state()
        for name in ("validation_loss_curve_", "validation_scores_"):
            meta[name] = [float(v) for v in getattr(self, name, [])]
        meta["best_iteration_"] = getattr(self, "best_iteration_", None)
        meta["validation_accuracy_floor_"] = getattr(self, "validation_accuracy_floor_", None)
        return meta, arrays

    def _restore(self, meta, arrays):
        super()._restore(meta, arrays)
        for name in ("validation_loss_curve_", "validation_scores_"):
            setattr(self, name, [float(v) for v in meta.get(name, [])])
        best = meta.get("best_iteration_")
        self.best_iteration_ = None if best is None else int(best)
        floor = meta.get("validation_accuracy_floor_")  # absent from older model files
        self.validation_accuracy_floor_ = None if floor is None else float(floor)


@dataclass(frozen=True)
class _ValidationRecord:
    """What a validation run gives ``fit``: its curves, the iteration chosen, the accuracy
    floor and (``refit=False``) the run's result at the chosen iteration."""

    losses: list
    scores: list
    best: int
    floor: float
    chosen: AlternatingResult | None


#: the fields of an AlternatingResult kept as JSON in a checkpoint (w is an array; w_init is
#: the run's own, restored with the loop)
_RESULT_META = tuple(f.name for f in fields(AlternatingResult) if f.name not in ("w", "w_init"))


def _json_value(value):
    """A result field as JSON: lists element-wise, numpy scalars as Python ones."""
    if isinstance(value, (list, tuple)):
        return [_json_value(v) for v in value]
    return value.item() if isinstance(value, np.generic) else value


class _ValidationTracker:
    """The validation run's ``after_iteration``: scores the held-out part after every
    outer iteration, says when the run should stop (``n_iter_no_change`` iterations
    without a new best loss or accuracy) and, with ``keep``, keeps the loop's result
    (``snapshot()``) of every iteration :func:`choosable_iterations` still admits, dropping
    each as soon as it no longer does, so that ``refit=False`` has the chosen iteration's
    model without a second run.  Its ``state``/``restore`` go into the loop's checkpoints."""

    def __init__(self, structure, X_val, y_val, patience: int, keep: bool):
        self.structure, self.X_val, self.y_val = structure, X_val, y_val
        self.patience, self.keep = patience, keep
        self.losses: list[float] = []
        self.accuracies: list[float] = []
        self.kept: dict[int, AlternatingResult] = {}

    def __call__(self, iteration, w, snapshot) -> bool:
        # in this process: the held-out part is small, and the learner's _decisions would
        # ship the task to process workers again after every iteration
        f = self.structure.decision_batch(self.X_val, w)
        y_val = self.y_val
        self.losses.append(float(np.mean(np.maximum(0.0, 1.0 - y_val * f) ** 2)))
        self.accuracies.append(float(np.mean(np.where(f >= 0.0, 1.0, -1.0) == y_val)))
        if self.keep:
            choosable = set(choosable_iterations(self.losses, self.accuracies, len(y_val)))
            for old in [t for t in self.kept if t not in choosable]:
                del self.kept[old]
            if iteration in choosable:
                self.kept[iteration] = snapshot()
        # the last iteration that lowered the loss or raised the accuracy (first best)
        last = max(int(np.argmin(self.losses)), int(np.argmax(self.accuracies))) + 1
        return iteration - last >= self.patience

    def state(self) -> tuple[dict, dict]:
        kept = {str(t): {name: _json_value(getattr(r, name)) for name in _RESULT_META}
                for t, r in self.kept.items()}
        meta = {"losses": list(self.losses), "accuracies": list(self.accuracies), "kept": kept}
        return meta, {f"w{t}": r.w for t, r in self.kept.items()}

    def restore(self, meta: dict, arrays: dict) -> None:
        self.losses[:] = [float(v) for v in meta["losses"]]
        self.accuracies[:] = [float(v) for v in meta["accuracies"]]
        self.kept = {int(t): AlternatingResult(w=np.array(arrays[f"w{t}"], dtype=np.float64),
                                               w_init=None, **fields_)
                     for t, fields_ in meta["kept"].items()}


def accuracy_floor(top: float, n_val: int) -> float:
    """The best validation accuracy ``top`` less one binomial standard error,
    ``sqrt(top (1 - top) / n_val)``: the floor of :func:`choose_iteration`.

    It never falls as ``top`` rises from any ``top >= 1 / n_val`` (which every accuracy
    above 0 on ``n_val`` examples is): ``top - sqrt(top (1 - top) / n)`` is convex in
    ``top``, and its slope at ``1 / n``, ``1 - (1 - 2/n) / (2 sqrt(1 - 1/n))``, is positive
    for every ``n >= 2`` (at ``n = 1`` only ``top = 1`` qualifies)."""
    return float(top) - math.sqrt(float(top) * (1.0 - float(top)) / int(n_val))


def choosable_iterations(losses, accuracies, n_val: int) -> list[int]:
    """The iterations (1-based) that :func:`choose_iteration` can still return once more
    iterations are appended to these curves, whatever their values.

    An iteration is out for good when

    * its accuracy is below the current accuracy floor (less 2e-12, twice the slack of
      :func:`choose_iteration`'s comparison, for rounding): the best accuracy can only rise
      and the floor with it (:func:`accuracy_floor`), so it will stay ineligible; or
    * another iteration has at least its accuracy and a lower loss, or the same loss and an
      earlier place: whenever it is eligible that one is too, and wins the argmin.

    Both facts only accumulate, so an iteration once out never comes back; the lowest loss
    among the iterations left is ``choose_iteration``'s current choice.  The LCLR-variant
    keeps the models of these iterations only (``refit=False``), usually a handful."""
    losses = np.asarray(losses, dtype=float)
    accuracies = np.asarray(accuracies, dtype=float)
    if losses.shape != accuracies.shape:
        raise ValueError("choosable_iterations needs one loss and one accuracy per iteration, "
                         f"got {losses.size} losses and {accuracies.size} accuracies")
    if losses.size == 0:
        return []
    top = float(accuracies.max())
    # below 1 / n_val the floor is not monotone in top (and on n_val examples top is then 0)
    floor = accuracy_floor(top, n_val) if top >= 1.0 / int(n_val) else -math.inf
    order = np.arange(losses.size)
    out = []
    for i in range(losses.size):
        if accuracies[i] < floor - 2e-12:
            continue
        better = (losses < losses[i]) | ((losses == losses[i]) & (order < i))
        if np.any((accuracies >= accuracies[i]) & better):
            continue
        out.append(i + 1)
    return out


def choose_iteration(losses, accuracies, n_val: int) -> tuple[int, float]:
    """The outer iteration early stopping keeps, from the validation curves (1-based), and
    the accuracy floor it was chosen under.

    Only iterations whose validation accuracy is within one binomial standard error,
    ``sqrt(a (1 - a) / n_val)``, of the best accuracy ``a`` are eligible; among them the
    lowest validation loss (mean squared hinge) wins, the first on ties.  The loss alone can
    prefer a model that is clearly worse on accuracy, since it measures how far off the
    scores are, not how many signs are right: from zero weights on grammaticality the
    first iteration calls almost every sentence real, yet its squared hinge was below that
    of the next five iterations, whose scores swing further before the negatives' caches
    catch up.  The floor refuses such a choice, and an accuracy argmax alone would pick
    noise.
    """
    losses = np.asarray(losses, dtype=float)
    accuracies = np.asarray(accuracies, dtype=float)
    if losses.size == 0 or losses.shape != accuracies.shape:
        raise ValueError("choose_iteration needs one loss and one accuracy per iteration, "
                         f"got {losses.size} losses and {accuracies.size} accuracies")
    floor = accuracy_floor(float(accuracies.max()), n_val)
    # a hair of slack so that an iteration exactly at the floor is not lost to rounding
    eligible = accuracies >= floor - 1e-12
    best = int(np.argmin(np.where(eligible, losses, np.inf))) + 1
    return best, floor
