"""``CRF``: sklearn-crfsuite's estimator, with the same constructor, methods and fitted
attributes, trained by latentstruct's learners.

``from latentstruct.crfsuite import CRF`` replaces ``from sklearn_crfsuite import CRF``:
every constructor parameter of ``sklearn_crfsuite.CRF`` is taken, with the same name,
default (None: CRFsuite's default for the algorithm) and meaning.  The algorithm picks the
learner:

==========  ======================================================================
algorithm   latentstruct learner
==========  ======================================================================
``lbfgs``   ``crf`` (CRFsuite's objective ``c1 |w|_1 + c2 |w|² + NLL``; L-BFGS, OWL-QN
            when ``c1 > 0``)
``l2sgd``   ``crf`` with ``solver="sgd"``, ``batch_size=1``, ``eta0="calibrate"``,
            ``sgd_stopping="delta"`` (CRFsuite's per-example SGD, calibration and stop)
``ap``      ``perceptron`` with ``average=True``
``pa``      ``pa`` (passive-aggressive, ``pa_type`` 0/1/2)
``arow``    ``arow``
==========  ======================================================================

each with ``feature_set="observed"`` (CRFsuite's generated features: ``possible_states``
and ``possible_transitions`` from ``all_possible_states`` and ``all_possible_transitions``),
over the task ``sequence`` with ``attribute_order="first_seen"`` (a first-order chain over
python-crfsuite's feature dicts, any label strings; real values scale their attribute, as in
CRFsuite).  A parameter that the
chosen algorithm does not read is refused, as python-crfsuite refuses it; a value that
latentstruct cannot honour exactly is refused with one line that says so, never ignored.
What differs, and why, is in ``docs/guide/crfsuite.md``.

Unlike sklearn-crfsuite no file is written behind the user's back: the model lives in the
object (which pickles, for joblib and ``cross_val_score(n_jobs=...)``), and
``model_filename`` names latentstruct's own model file (JSON metadata + ``.npz`` arrays),
written by ``fit`` and read when an unfitted ``CRF(model_filename=PATH)`` predicts (a
CRFsuite model file, written by python-crfsuite or sklearn-crfsuite, is read too).  Where
sklearn-crfsuite's ``fit`` overwrites whatever ``model_filename`` names, ``fit`` here
refuses, before training, to replace an existing file that is not a latentstruct model:
above all a CRFsuite model file, which python-crfsuite could no longer read once turned
into latentstruct's format.  ``X_dev``/``y_dev`` are checked as ``X``/``y`` are, before
training.
"""

from __future__ import annotations

import os
import re
import tempfile
import time
import warnings

from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning

from ..exceptions import ConfigError, check_is_fitted
from ..params import store_init_args
from .metrics import flat_accuracy_score
from .tagger import ChainTagger

__all__ = ["CRF", "ALGORITHMS", "TrainingLog"]

ALGORITHMS = ("lbfgs", "l2sgd", "ap", "pa", "arow")

_FEATURE_GENERATION = ("min_freq", "all_possible_states", "all_possible_transitions")
#: the parameters each algorithm reads (CRFsuite's manual); any other non-None one is refused
PARAMETERS_OF = {
    "lbfgs": {*_FEATURE_GENERATION, "c1", "c2", "max_iterations", "num_memories", "epsilon",
              "period", "delta", "linesearch", "max_linesearch"},
    "l2sgd": {*_FEATURE_GENERATION, "c2", "max_iterations", "period", "delta",
              "calibration_eta", "calibration_rate", "calibration_samples",
              "calibration_candidates", "calibration_max_trials"},
    "ap": {*_FEATURE_GENERATION, "max_iterations", "epsilon"},
    "pa": {*_FEATURE_GENERATION, "max_iterations", "epsilon", "pa_type", "c",
           "error_sensitive", "averaging"},
    "arow": {*_FEATURE_GENERATION, "max_iterations", "epsilon", "variance", "gamma"},
}
_ALL = sorted(set().union(*PARAMETERS_OF.values()))


class TrainingLog:
    """``training_log_``: one dict per iteration (``num``, ``loss``: the learner's objective
    or, for the online algorithms, the training errors of the pass) and, with ``X_dev``,
    ``holdout``: the token accuracy on the development data after training."""

    def __init__(self, iterations: list[dict], seconds: float, holdout: float | None = None):
        self.iterations = iterations
        self.seconds = seconds
        self.holdout = holdout

    @property
    def last_iteration(self) -> dict | None:
        return self.iterations[-1] if self.iterations else None

    def __repr__(self) -> str:
        return (f"TrainingLog({len(self.iterations)} iterations, {self.seconds:.2f}s"
                f"{'' if self.holdout is None else f', holdout accuracy {self.holdout:.4f}'})")


#: ``X`` and ``y`` as make_dataset's messages name them (``X[3][5]``, ``y has 2 targets``),
#: never inside a quoted attribute name or a longer word
_DEV_NAMES = re.compile(r"(?<![\w'\"])([Xy])(?=\[|\s(?:has|holds)\b)")


def _holdout_dataset(X_dev, y_dev, task_opts: dict):
    """``X_dev``/``y_dev`` as the task's dataset, checked exactly as ``fit`` checks ``X``
    and ``y`` (the same ``make_dataset``: as many label sequences as sequences, one label
    per item, finite attribute values of at most ``MAX_ATTRIBUTE_VALUE``), before any
    training; a problem is the same InputError, naming ``X_dev``/``y_dev``.  sklearn-crfsuite
    refuses a misaligned holdout sequence too (python-crfsuite's ``Trainer.append``)."""
    from ..exceptions import InputError
    from ..tasks import get_task_class

    task = get_task_class("sequence")(**task_opts)
    try:
        return task.make_dataset(X_dev, y_dev)
    except InputError as exc:
        # the same message, its X and y named as the holdout's (never a quoted name)
        raise InputError(_DEV_NAMES.sub(lambda m: f"{m.group(1)}_dev", exc.message),
                         exc.path, exc.line) from None


def _check_model_filename(path) -> None:
    """``model_filename`` for ``fit`` to write, checked before training: a writable path,
    and no file of another format replaced.  sklearn-crfsuite writes a CRFsuite model there,
    and a script may point it at one that python-crfsuite or ``crfsuite tag`` still reads;
    ``fit`` here writes latentstruct's format, so a CRFsuite model file (or any file that is
    not a latentstruct model) is refused rather than silently turned into another format."""
    from ..data.atomic import check_output_path
    from ..estimators.crfsuite_file import is_crfsuite_file
    from ..exceptions import ModelFormatError
    from ..io import inspect_model

    target = check_output_path(path, what="model_filename")
    if not target.is_file() or target.stat().st_size == 0:
        return
    if is_crfsuite_file(target):
        raise ConfigError(
            f"model_filename={os.fspath(path)!r} is a CRFsuite model file (python-crfsuite's "
            f"format), and fit writes latentstruct's model format, which python-crfsuite "
            f"cannot read: it is not replaced. Give model_filename a new path (e.g. "
            f"'model.npz'), or delete the file; CRF(model_filename=...) without fit reads it")
    try:
        inspect_model(target)
    except ModelFormatError:
        raise ConfigError(
            f"model_filename={os.fspath(path)!r} is an existing file that is not a "
            f"latentstruct model; fit would replace it with its model, so it is left as it "
            f"is: give model_filename a new path, or delete the file") from None


class CRF(BaseEstimator):
    """A linear-chain CRF (or perceptron, PA, AROW) over python-crfsuite feature dicts, with
    sklearn-crfsuite's interface; see the module docstring and sklearn-crfsuite's
    documentation for every parameter (same names, defaults and meaning).

    One parameter is latentstruct's own: ``constrained`` ({"auto", True, False}, default
    "auto").  When the labels are chunk tags (``B-PER I-PER O``: IOB1, IOB2, IOE1/2 or
    BIOES) and every training sequence is well-formed in their scheme, the model decodes
    and trains only well-formed sequences (no ``I-PER`` after ``O``; CRFsuite predicts such
    sequences, python-crfsuite issue 72); other labels leave the chain as CRFsuite's.
    ``constrained=False`` is CRFsuite's model exactly (``tasks.sequence.well_formed``).

    Attributes
    ----------
    classes_ : list of str
        The labels (None before ``fit``, as every attribute here).
    size_ : int
        The model's size in bytes (its latentstruct model file).
    num_attributes_ : int
    attributes_ : list of str
    state_features_ : dict
        ``{(attribute, label): weight}``, the non-zero weights.
    transition_features_ : dict
        ``{(label_from, label_to): weight}``, the non-zero weights.
    training_log_ : TrainingLog
    tagger_ : object
        python-crfsuite's ``Tagger`` methods: ``labels``, ``tag``, ``set``, ``marginal``,
        ``probability``, ``info``.
    """

    def __init__(self, algorithm=None, min_freq=None, all_possible_states=None,
                 all_possible_transitions=None, c1=None, c2=None, max_iterations=None,
                 num_memories=None, epsilon=None, period=None, delta=None, linesearch=None,
                 max_linesearch=None, calibration_eta=None, calibration_rate=None,
                 calibration_samples=None, calibration_candidates=None,
                 calibration_max_trials=None, pa_type=None, c=None, error_sensitive=None,
                 averaging=None, variance=None, gamma=None, verbose=False, model_filename=None,
                 keep_tempfiles=False, trainer_cls=None, constrained="auto"):
        store_init_args(self, locals())

    # --- the learner a configuration asks for ----------------------------------------------
    def _learner_and_options(self) -> tuple[str, dict, dict]:
        """(learner name, learner options, task options), every parameter checked."""
        from .mapping import learner_options

        algorithm = "lbfgs" if self.algorithm is None else self.algorithm
        if algorithm not in ALGORITHMS:
            raise ConfigError(f"algorithm={algorithm!r} is not a CRFsuite training algorithm; "
                              f"use one of {', '.join(map(repr, ALGORITHMS))}")
        given = {name: getattr(self, name) for name in _ALL if getattr(self, name) is not None}
        foreign = sorted(set(given) - PARAMETERS_OF[algorithm])
        if foreign:
            users = [a for a in ALGORITHMS if foreign[0] in PARAMETERS_OF[a]]
            raise ConfigError(
                f"{foreign[0]}={given[foreign[0]]!r} is a parameter of algorithm "
                f"{' / '.join(map(repr, users))}, not of algorithm={algorithm!r} (CRFsuite "
                f"refuses it too); drop it or choose that algorithm")
        if self.trainer_cls is not None:
            raise ConfigError("trainer_cls names a python-crfsuite Trainer class, which "
                              "latentstruct does not use; drop trainer_cls (training progress: "
                              "verbose=True; the log: training_log_)")
        return learner_options(algorithm, given, verbose=bool(self.verbose))

    # --- fit ----------------------------------------------------------------------------
    def fit(self, X, y, X_dev=None, y_dev=None) -> "CRF":
        """Train on ``X`` (lists of python-crfsuite feature dicts) and ``y`` (lists of
        label strings); ``X_dev``/``y_dev``, given together, are checked as ``X``/``y``
        before training (an ``InputError``, a ``ValueError``, naming ``X_dev``/``y_dev``) and
        scored after it (``training_log_.holdout``).  With ``model_filename`` the model is
        then written there, in latentstruct's model format; an existing file there that is
        not a latentstruct model (a python-crfsuite ``.crfsuite`` file) is refused before
        training, never replaced.  Returns self."""
        from ..estimators import Estimator

        if (X_dev is None) != (y_dev is None):
            raise ValueError("Pass both X_dev and y_dev to use the holdout data (got only "
                             f"{'X_dev' if y_dev is None else 'y_dev'})")
        name, learner_opts, task_opts = self._learner_and_options()
        task_opts = {**task_opts, "constrained": self.constrained}
        if self.model_filename is not None:
            _check_model_filename(self.model_filename)
        holdout_data = None
        if X_dev is not None:  # checked as X and y are, before any training
            X_dev, y_dev = list(X_dev), [list(t) for t in y_dev]
            holdout_data = _holdout_dataset(X_dev, y_dev, task_opts)
        t0 = time.perf_counter()
        model = Estimator(task="sequence", learner=name, **task_opts, **learner_opts)
        y = [list(t) for t in y]
        with warnings.catch_warnings():
            # CRFsuite stops at max_iterations as its normal end, silently (the log says how
            # many ran): latentstruct's "stopped at max_iter" note is not a warning here;
            # any other warning still is
            warnings.filterwarnings("ignore", message=r".*stopped at max_iter",
                                    category=ConvergenceWarning)
            model.fit(list(X), y)
        # CRFsuite numbers the labels as they first occur in the training data
        self._label_order = list(dict.fromkeys(label for tags in y for label in tags))
        seconds = time.perf_counter() - t0
        learner = model.learner_
        curve = list(getattr(learner, "objective_curve_", []) or [])
        iterations = [{"num": k + 1, "loss": float(v)} for k, v in enumerate(curve)]
        holdout = None
        if holdout_data is not None:
            task = model.task_
            pred = task.decode_targets(learner.predict(task.featurize(holdout_data)))
            holdout = flat_accuracy_score(y_dev, pred)
        self._model = model
        self._size = None
        self.training_log_ = TrainingLog(iterations, seconds, holdout)
        if self.verbose:
            print(f"{name}: {len(iterations)} iterations in {seconds:.2f}s"
                  + ("" if holdout is None else f"; holdout token accuracy {holdout:.4f}"))
        if self.model_filename is not None:
            model.save(self.model_filename)
        return self

    # --- pickling: the model as its model file ---------------------------------------------
    def __getstate__(self):
        """The state to pickle, with the fitted model as the bytes of its latentstruct model
        file (sparse, compressed arrays: 0.32 MB for a CoNLL-2000 tutorial model that
        pickles to 4.8 MB as objects; sklearn-crfsuite's is 0.75 MB)."""
        state = self.__dict__.copy()
        model = state.pop("_model", None)
        if model is not None:
            with tempfile.TemporaryDirectory() as folder:
                path = os.path.join(folder, "model.npz")
                model.save(path)
                with open(path, "rb") as f:
                    state["_model_file"] = f.read()
        return state

    def __setstate__(self, state):
        state = dict(state)
        data = state.pop("_model_file", None)
        self.__dict__.update(state)
        if data is not None:
            from ..estimators import load

            # read back through the model file's checks (format version, schema, limits)
            with tempfile.TemporaryDirectory() as folder:
                path = os.path.join(folder, "model.npz")
                with open(path, "wb") as f:
                    f.write(data)
                self._model = load(path)

    # --- the fitted model ----------------------------------------------------------------
    def _fitted(self, required: bool = True):
        model = getattr(self, "_model", None)
        if model is None and self.model_filename is not None and \
                os.path.exists(os.fspath(self.model_filename)):
            from .mapping import load_model_file

            model = self._model = load_model_file(self.model_filename)
            self._size = None
        if required:
            check_is_fitted(self, "_model",
                            fix="Call 'fit' with appropriate arguments before using this "
                                "estimator (or give model_filename= an existing model file).")
        return model

    def predict(self, X, *, allowed=None) -> list[list[str]]:
        """The best label sequence of every sequence of ``X``: a list of lists of strings.
        latentstruct's extension, ``allowed``: the labels each item may take (one entry
        per sequence, None or one per item: None, a label, or a set of labels; see
        ``latentstruct.Tagger.predict``)."""
        model = self._fitted()
        return [list(p) for p in model.predict([list(x) for x in X], allowed=allowed)]

    def predict_nbest(self, X, k: int = 5, *, allowed=None) -> list[list[tuple]]:
        """latentstruct's extension: the ``k`` best label sequences of every sequence of
        ``X``, best first, as ``(labels, score, probability)`` tuples (``probability``:
        p(labels | x) when the model was trained as a CRF, ``algorithm="lbfgs"`` or
        ``"l2sgd"``, else None); exact, under ``allowed`` as :meth:`predict` takes it."""
        model = self._fitted()
        return [[(list(y), s, p) for y, s, p in best]
                for best in model.predict_nbest([list(x) for x in X], k, allowed=allowed)]

    def explain_prediction(self, xseq, *, allowed=None):
        """latentstruct's extension: why ``xseq`` gets its labels, every state and
        transition weight's share of the score (``latentstruct.Tagger.explain_prediction``;
        text, or HTML in a notebook)."""
        return self._fitted().explain_prediction(list(xseq), allowed=allowed)

    def explain_weights(self, top: int = 10):
        """latentstruct's extension: each label's largest weights and the transitions
        (``latentstruct.Tagger.explain_weights``)."""
        return self._fitted().explain_weights(top)

    def predict_single(self, xseq) -> list[str]:
        """The best label sequence of one sequence."""
        return self.predict([xseq])[0]

    def predict_marginals(self, X) -> list[list[dict]]:
        """Per sequence, per item, ``{label: p(label)}`` (sums to one).  Whatever trained
        the weights, they are scored as a CRF's, as CRFsuite does: the marginals of the
        chain whose log-potentials are the model's scores (forward-backward)."""
        model = self._fitted()
        X = [list(x) for x in X]
        order = self.classes_  # CRFsuite's label order, for the dicts' keys
        if hasattr(model.learner_, "predict_marginals"):
            return [[{label: p[label] for label in order} for p in seq]
                    for seq in model.predict_marginals(X)]
        task = model.task_
        fast = getattr(task, "featurize_raw", None)  # feature dicts without records
        corpus = None if fast is None else fast(X)
        if corpus is None:
            corpus = task.featurize(task.make_dataset(X))
        marginals = task.structure_.marginals_batch(corpus, model.learner_.coef_)
        labels = list(task.labels_)
        return [[{label: p[label] for label in order}
                 for p in (dict(zip(labels, row.tolist())) for row in m)] for m in marginals]

    def predict_marginals_single(self, xseq) -> list[dict]:
        """``predict_marginals`` of one sequence."""
        return self.predict_marginals([xseq])[0]

    def score(self, X, y) -> float:
        """Token accuracy of ``predict(X)`` against ``y`` (``metrics.flat_accuracy_score``)."""
        return flat_accuracy_score([list(t) for t in y], self.predict(X))

    # --- sklearn-crfsuite's fitted attributes (None before fit) ----------------------------
    @property
    def tagger_(self):
        model = self._fitted(required=False)
        return None if model is None else ChainTagger(model, self.size_, self.classes_)

    @property
    def classes_(self):
        """The labels in the order CRFsuite keeps them: as they first occur in the training
        data (a model read from a file: the file's order)."""
        model = self._fitted(required=False)
        if model is None:
            return None
        labels = list(model.task_.labels_)
        known = set(labels)
        seen = [label for label in getattr(self, "_label_order", ()) if label in known]
        first = set(seen)
        return seen + [label for label in labels if label not in first]

    @property
    def size_(self):
        model = self._fitted(required=False)
        if model is None:
            return None
        if getattr(self, "_size", None) is None:  # the bytes of its model file
            with tempfile.TemporaryDirectory() as folder:
                path = os.path.join(folder, "model.npz")
                model.save(path)
                self._size = os.path.getsize(path)
        return self._size

    @property
    def num_attributes_(self):
        names = self.attributes_
        return None if names is None else len(names)

    @property
    def attributes_(self):
        """The attributes that survive into the model, as CRFsuite counts them: those with
        a non-zero state feature (an L1 penalty drops the others), in the index's order."""
        model = self._fitted(required=False)
        if model is None:
            return None
        index = model.task_.attr_index_
        if not hasattr(index, "names"):
            return None
        used = {attribute for attribute, _ in self.state_features_}
        return [name for name in index.names if name in used]

    @property
    def state_features_(self):
        tagger = self.tagger_
        return None if tagger is None else tagger.info().state_features

    @property
    def transition_features_(self):
        tagger = self.tagger_
        return None if tagger is None else tagger.info().transitions
