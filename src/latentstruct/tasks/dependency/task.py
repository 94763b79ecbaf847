"""First-order dependency parsing (``dep``): :class:`DependencyTask`.

Reading CoNLL-U and PTB ``.dp`` trees, resolving the "auto" parameters in ``fit``, the
predicted POS tags' tagger, UAS / LAS evaluation and persistence.  Featurising sentences and
encoding gold trees is the fitted
:class:`~latentstruct.tasks.dependency.featurizer.DependencyFeaturizer` (``featurizer_``);
the weight layout and decoding are the base class
:class:`~latentstruct.tasks.dependency.decoding.DependencyStructure`; the model is
described in :mod:`latentstruct.tasks.dependency`.
"""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np

from ...data.dependency import PTB_SPLITS, punctuation_mask, read_dependencies, write_dependencies
from ...exceptions import ConfigError, InputError, check_is_fitted, is_fitted
from ...limits import DEP_HASH_BITS, LABEL_HASH_BITS
from ...params import BOOL, STR, Interval, Options, Satisfies, bounded
from ..base import ComposedTask, Dataset, register_task
from ..contracts import KBEST, MAX_DECODABLE, SIZED
from ..reports import attachment_report
from ..sequence.pos import PosTask
from .corpus import DepCorpus
from .decoding import DependencyStructure
from .featurizer import DependencyFeaturizer, DepTarget, check_pos_relation, data_format
from .params import parse_distance_bins
from .raw import dependency_records, raw_trees
from .tagging import UposTagger

__all__ = ["DependencyTask", "DepTarget"]

#: the fitted featurizer's attributes the task mirrors (``make_dataset``, the estimators
#: and inspection read them on the task)
_FEATURIZER_ATTRIBUTES = ("data_format_", "pos_column_", "labelled_", "labels_",
                          "input_kind_", "n_columns_")


@register_task
class DependencyTask(ComposedTask):
    """Projective first-order dependency parsing of CoNLL-U or PTB ``.dp`` data, by UAS.

    Parameters
    ----------
    hash_bits : int, default 22
        Arc features are hashed into 2**hash_bits weights.
    label_hash_bits : int, default 18
        Label contexts are hashed into 2**label_hash_bits rows of one weight per label.
    single_root : {"auto", True, False}
        Decode trees with exactly one word attached to ROOT; "auto": True for CoNLL-U
        training data (UD requires it), False for ``.dp`` data.
    labelled : {"auto", True, False}
        Predict dependency labels too; "auto": when the training data has DEPRELs.
    pos : {"gold", "predicted"}
        POS tags for the features: the file's own, or UPOS predicted by the project's
        tagger (``latentstruct train`` attaches one, see ``tagger_model``); not for ``.dp``.
    pos_column : {"auto", "upos", "xpos"}
        Which gold POS column feeds the features; "auto": UPOS for CoNLL-U, the PTB tag
        (xpos) for ``.dp``.
    distance_bins : tuple of int, default (1, 2, 3, 4, 5, 10)
        Starts of the arc-length bins conjoined with every arc template (increasing, from 1).
        A comma-separated string such as "1,2,4,8" is accepted.
    ptb_split : {"all", "train", "heldout", "auto"}
        Documents read from a directory of wsj_NNNN.dp files: all of them, wsj_0001-0119,
        wsj_0120-0142, or "auto" (the train documents for training data, the held-out ones
        for test data).  Files are always read whole.
    tagger_model : str or None
        With pos="predicted": a ``pos`` model file used as the tagger; without one,
        ``latentstruct train`` trains the default tagger on UD EWT.
    tagger_sentences : int, default 3000
        Training sentences of that default tagger (the first ones of UD EWT train).

    Notes
    -----
    On UD EWT train (12.5k sentences) a StructuredSVM iteration (two loss-augmented
    decoding passes and the working-set solve, one core) takes 18 s at first and up to a
    minute as the working set grows, so the default ``max_iter=50`` runs for about 40
    minutes without reaching ``tol`` (relative gap 0.09 after 43 iterations).  Recommended:
    ``latentstruct train dep --train en_ewt-ud-train.conllu --model dep.npz --option
    max_iter=15`` (about 7 minutes; EWT dev UAS 0.867, LAS 0.811).

    Raw form (``make_dataset``): ``X`` holds one sentence per example, a list of
    ``(word, POS)`` pairs, and ``y`` one gold tree per sentence (or None): its heads
    (1-based, 0 = root), or ``(head, deprel)`` pairs for a labelled parser::

        X = [[("Dogs", "NOUN"), ("bark", "VERB"), (".", "PUNCT")], [("Hi", "INTJ")]]
        y = [[2, 0, 2], [0]]
        y_labelled = [[(2, "nsubj"), (0, "root"), (2, "punct")], [(0, "root")]]

    UPOS tags are taken as CoNLL-U data, other tags (PTB) as ``.dp`` data
    (``tasks.dependency.raw``); ``decode_predictions`` gives trees in ``y``'s form.

    A sentence may come with numbers, ``(tokens, vectors)`` with ``vectors`` an
    (n_tokens x d) array (dense or ``scipy.sparse``): they reach the arc features as the
    head's and the dependent's vectors by direction, their elementwise product and a root
    block (6 d weights after the hashed ones; :mod:`latentstruct.tasks.dependency.vectors`).
    The fitted task records ``input_kind_`` ("tokens" or "numbers") and ``n_columns_`` (d;
    0 for tokens) and refuses input of the other kind or column count.
    """

    name = "dep"
    score_metric = "uas"
    default_learner = "ssvm"
    # A tree's feature difference has thousands of non-zeros, so the structural SVM's
    # generic C=0.1 leaves the cutting plane far from converged after 50 iterations on UD
    # EWT (duality gap 0.09 after 43); C=0.001 converges in 8 iterations to a relative gap
    # of 0.1 and in 23 to 0.01, and dev UAS stops moving at the first (85.66 against 85.60,
    # punctuation included), so the task stops at tol=0.1.  The exact evaluation pass runs
    # only near the end (evaluate="near": 3 evaluations instead of 8).  The online passes'
    # sweeps do most of the dual work, so two epochs of the full working-set solve per
    # iteration suffice (same iterations and UAS as 20 on 2,000 sentences, 37% less CPU),
    # and decoding, the rest of the time, runs on every core (threads; the model does not
    # depend on it).  Measurements: docs/performance.md.
    learner_defaults = {"ssvm": {"C": 0.001, "tol": 0.1, "evaluate": "near",
                                 "inner_max_iter": 2, "n_jobs": -1}}
    capabilities = frozenset({MAX_DECODABLE, SIZED, KBEST})
    #: the structure ``fit`` builds (``structure_``): the weight layout, Phi, Eisner
    structure_class = DependencyStructure
    evaluation_params = frozenset({"ptb_split"})
    # a file path: the tagger is saved in the model file, its path is never reused
    local_params = frozenset({"tagger_model"})
    # with pos="predicted", latentstruct train attaches a tagger (pipelines.attach_tagger)
    pretrained_helpers = frozenset({"pos-tagger"})
    #: the featurizer ``fit`` builds; ``pos``, ``pos_column`` and ``labelled`` are the
    #: task's too (the relations are the training data's, the tagger the task's own)
    featurizer_class = DependencyFeaturizer
    featurizer_fixed = {"classes": None, "tagger": None}
    _parameter_constraints = {  # and the featurizer's own
        "hash_bits": [bounded(DEP_HASH_BITS)],
        "label_hash_bits": [bounded(LABEL_HASH_BITS)],
        "single_root": [Options("auto"), BOOL],
        "ptb_split": [Options(*PTB_SPLITS, "auto")],
        "distance_bins": [Satisfies(lambda v: parse_distance_bins(v) is not None,
                                    "strictly increasing integers starting at 1, such as "
                                    "(1, 2, 3, 4, 5, 10) or '1,2,4,8'")],
        "tagger_model": [Satisfies(STR.accepts, "the path of a pos model file (a str)"), None],
        "tagger_sentences": [Interval(int, 1)],
    }

    def __init__(self, *, hash_bits=22, label_hash_bits=18, single_root="auto",
                 distance_bins=(1, 2, 3, 4, 5, 10), ptb_split="all", tagger_model=None,
                 tagger_sentences=3000, **featurizer_params):
        super().__init__(**featurizer_params)
        self.hash_bits = hash_bits
        self.label_hash_bits = label_hash_bits
        self.single_root = single_root
        self.distance_bins = distance_bins
        self.ptb_split = ptb_split
        self.tagger_model = tagger_model
        self.tagger_sentences = tagger_sentences

    def _check_param_relations(self) -> None:
        check_pos_relation(self.pos, self.pos_column)

    # --- data --------------------------------------------------------------------------
    def read(self, path, *, split: str = "train") -> Dataset:
        """Read CoNLL-U / ``.dp`` trees; ``split`` picks the PTB documents when
        ``ptb_split="auto"`` ("train": wsj_0001-0119, anything else: wsj_0120-0142)."""
        self.check_params()
        if path is None:
            raise ConfigError("the dep task needs a data path (a .conllu file, a .dp file or a "
                              "directory of .dp files)")
        doc_split = "all"
        if Path(path).is_dir():
            doc_split = self.ptb_split
            if doc_split == "auto":
                doc_split = "train" if split == "train" else "heldout"
        single_root = None if self.single_root == "auto" else bool(self.single_root)
        records = read_dependencies(path, single_root=single_root, split=doc_split)
        if self.pos == "predicted" and any(r.file_format == "dp" for r in records):
            raise ConfigError(
                "pos='predicted' needs UD data: the project's tagger predicts UPOS, while .dp "
                "files carry PTB tags; use pos='gold' for .dp data")
        return Dataset(records, _gold_trees(records), str(path))

    def make_dataset(self, X, y=None) -> Dataset:
        """Sentences from Python lists: ``X`` a list of sentences, each a list of
        ``(word, POS)`` pairs; ``y`` a list of gold trees, each a list of heads (ints,
        1-based, 0 = root) or of ``(head, deprel)`` pairs, or None (targets None:
        unlabelled input for ``predict``).

        The records are ``DependencySentence`` records as the readers build them (line 0;
        UPOS tags as from CoNLL-U, other tags as from ``.dp``; see
        ``tasks.dependency.raw``), each tree checked by ``check_tree`` (a single root when
        ``single_root`` resolves to True).  A bad entry is an ``InputError`` naming it
        (``X[3][5]``, ``y[2][4]``).
        """
        self.check_params()
        records = dependency_records(self, X, y)
        return Dataset(records, [None] * len(records) if y is None else _gold_trees(records))

    def decode_predictions(self, predictions) -> list[list]:
        """``predict``'s (3, n) trees in ``make_dataset``'s ``y`` form: a list of heads per
        sentence (``[[2, 0, 2], ...]``), or of ``(head, deprel)`` pairs when the parser is
        labelled (``[[(2, "nsubj"), (0, "root"), (2, "punct")], ...]``)."""
        check_is_fitted(self)
        return raw_trees(self.decode_targets(predictions), bool(self.labelled_))

    def fit(self, dataset: Dataset) -> "DependencyTask":
        """Resolve the "auto" parameters from the training data and fit the featurizer
        (``featurizer_``: the POS column, the labels and the input kind)."""
        records = list(dataset.records)
        if not records:
            raise InputError("training data contains no sentences", dataset.path)
        _check_gold(dataset, "training")
        fmt = data_format(records)
        if fmt == "mixed" and "auto" in (self.pos_column, self.single_root):
            raise ConfigError("the training data mixes CoNLL-U and .dp sentences; set "
                              "pos_column and single_root explicitly")
        featurizer = self.make_featurizer().set_params(
            classes=dataset.labels, tagger=self._upos_tagger()).fit(records, path=dataset.path)
        self.single_root_ = (fmt == "conllu") if self.single_root == "auto" \
            else bool(self.single_root)
        self.bins_ = parse_distance_bins(self.distance_bins)
        self._use_featurizer(featurizer)
        self._build_structure()
        return self

    def _new_structure(self) -> DependencyStructure:
        """The structure of this task's tables and what its featurizer learned."""
        return self.structure_class(
            hash_bits=self.hash_bits, label_hash_bits=self.label_hash_bits,
            labels=self.labels_, labelled=self.labelled_, single_root=self.single_root_,
            bins=self.bins_, input_kind=self.input_kind_, n_columns=self.n_columns_)

    def resolved_single_root(self) -> bool:
        """Whether decoding attaches exactly one word to ROOT (``single_root`` resolved)."""
        check_is_fitted(self)
        return bool(self.single_root_)

    def is_labelled(self) -> bool:
        """Whether the task predicts labels (``labelled`` resolved from the training data)."""
        check_is_fitted(self)
        return bool(self.labelled_)

    @property
    def n_labels(self) -> int:
        """The number of dependency relations (``labels_``)."""
        check_is_fitted(self)
        return len(self.labels_)

    def _use_featurizer(self, featurizer: DependencyFeaturizer) -> None:
        """Hold the fitted ``featurizer`` and mirror its learned attributes."""
        self.featurizer_ = featurizer
        for name in _FEATURIZER_ATTRIBUTES:
            setattr(self, name, getattr(featurizer, name))

    # --- predicted POS tags ------------------------------------------------------------
    def set_tagger(self, pos_task: PosTask, coef: np.ndarray):
        """Use a fitted ``PosTask`` with weights ``coef`` as the UPOS tagger."""
        tagger = UposTagger(pos_task, coef)
        self.tagger_, self.tagger_coef_ = tagger.pos_task, tagger.coef
        if is_fitted(self):  # a copy: clones of a fitted task share its featurizer
            self.featurizer_ = copy.copy(self.featurizer_).set_params(tagger=tagger)
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

    def _upos_tagger(self) -> UposTagger | None:
        """The attached tagger (None without one)."""
        if getattr(self, "tagger_", None) is None:
            return None
        return UposTagger(self.tagger_, self.tagger_coef_)

    def _checked_tagger(self) -> UposTagger:
        tagger = self._upos_tagger()
        if tagger is None:
            where = ("" if self.tagger_model is None else
                     f" (tagger_model={self.tagger_model!r} is given but not loaded)")
            raise ConfigError(
                f"pos='predicted' needs a POS tagger{where}: call "
                "latentstruct.pipelines.attach_tagger(task) or set_tagger before featurize")
        return tagger

    def tag(self, sentences) -> list[tuple]:
        """UPOS tags of tokenized sentences (sequences of words) from the attached tagger."""
        return self._checked_tagger().tag(sentences)

    # --- featurising (the featurizer) --------------------------------------------------
    def featurize(self, dataset: Dataset) -> DepCorpus:
        """Token codes of every sentence (ROOT first) as one ``DepCorpus``
        (``featurizer_.transform``)."""
        check_is_fitted(self)
        if self.pos == "predicted":
            self._checked_tagger()
        return self.featurizer_.transform(dataset.records, path=dataset.path)

    def encode_targets(self, targets) -> list[np.ndarray]:
        """Gold trees to (3, n) arrays (heads, relation ids, scored).  A relation not in
        ``labels_`` is refused (``UnseenLabelError`` naming it and the model's relations);
        evaluation scores raw gold trees instead (:meth:`evaluate_raw`)."""
        check_is_fitted(self)
        return self.featurizer_.encode_targets(targets)

    def evaluate_raw(self, targets, predictions) -> dict:
        """``evaluate`` against raw gold trees: a relation the model never saw counts as a
        wrong label (LAS), its head as any other (UAS)."""
        check_is_fitted(self)
        return self.evaluate(self.featurizer_.encode_targets(targets, unseen_ok=True),
                             predictions)

    def decode_targets(self, structures) -> list[DepTarget]:
        """(3, n) arrays to ``DepTarget`` (label strings, '_' when unlabelled)."""
        check_is_fitted(self)
        return self.featurizer_.decode_targets(structures)

    # --- evaluation ----------------------------------------------------------------------
    def evaluate(self, targets, predictions) -> dict:
        """UAS and LAS over the scored (non-punctuation) words.

        Returns ``{"uas", "las" (None when unlabelled), "n_tokens_scored", "n_sentences",
        "pos" ("gold" or "predicted")}``.
        """
        scored = correct_h = correct_l = n_sent = 0
        for y, p in zip(targets, predictions, strict=True):
            y, p = np.asarray(y), np.asarray(p)
            mask = y[2].astype(bool) if y.shape[0] > 2 else np.ones(y.shape[1], bool)
            ok = (y[0] == p[0]) & mask
            scored += int(mask.sum())
            correct_h += int(ok.sum())
            correct_l += int((ok & (y[1] == p[1]) & (y[1] >= 0)).sum())
            n_sent += 1
        return {
            "uas": correct_h / scored if scored else 0.0,
            "las": (correct_l / scored if scored else 0.0) if self.labelled_ else None,
            "n_tokens_scored": scored,
            "n_sentences": n_sent,
            "pos": self.pos,
        }

    def evaluate_model(self, dataset: Dataset, predict, decision_function=None) -> dict:
        """The metrics of ``evaluate`` that ``latentstruct evaluate`` prints: numbers and
        None (``las`` of an unlabelled parser); ``pos``, a string, is left out."""
        _check_gold(dataset, "evaluation")
        metrics = super().evaluate_model(dataset, predict, decision_function)
        return {k: v for k, v in metrics.items() if not isinstance(v, str)}

    def report(self, dataset: Dataset, predictions) -> dict:
        """Per gold relation: scored tokens, UAS and LAS (None for an unlabelled parser)."""
        pred = self.decode_targets(predictions)
        gold = list(dataset.targets)
        return attachment_report([g.heads for g in gold], [p.heads for p in pred],
                                 [g.deprels for g in gold],
                                 [p.deprels for p in pred] if self.labelled_ else None,
                                 [g.scored for g in gold])

    def write_predictions(self, path, dataset: Dataset, predictions) -> None:
        """CoNLL-U with the predicted HEAD and DEPREL ('_' when unlabelled)."""
        trees = self.decode_targets(predictions)
        write_dependencies(path, dataset.records, [t.heads for t in trees],
                           [t.deprels for t in trees])

    # --- persistence ---------------------------------------------------------------------
    def get_state(self):
        check_is_fitted(self)
        state = {"single_root": bool(self.single_root_), **self.featurizer_.get_state()}
        arrays: dict = {}
        if self.pos == "predicted":
            if getattr(self, "tagger_", None) is None:
                raise ConfigError("cannot save a dep model with pos='predicted' without its "
                                  "tagger; call set_tagger (or pipelines.attach_tagger) before "
                                  "fit")
            self._upos_tagger().save(state, arrays)
        return state, arrays

    @classmethod
    def from_state(cls, params, state, arrays):
        task = cls(**params)
        task.check_params()
        featurizer = DependencyFeaturizer.from_state(state, **task.make_featurizer().get_params())
        task.single_root_ = bool(state["single_root"])
        task.bins_ = parse_distance_bins(task.distance_bins)
        if task.pos == "predicted":
            tagger = UposTagger.restore(state, arrays)
            task.tagger_, task.tagger_coef_ = tagger.pos_task, tagger.coef
            featurizer.set_params(tagger=tagger)
        task._use_featurizer(featurizer)
        task._build_structure()
        return task


def _gold_trees(records) -> list[DepTarget]:
    """The targets of read trees: heads, labels and the scored (non-punctuation) mask."""
    return [DepTarget(r.heads, r.deprels, tuple(punctuation_mask(r).tolist())) for r in records]


def _check_gold(dataset: Dataset, what: str) -> None:
    if any(t is None for t in dataset.targets):
        raise InputError(f"the {what} data has no gold trees (make_dataset without y); give "
                         f"y, one tree per sentence", dataset.path)
