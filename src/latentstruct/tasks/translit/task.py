"""Transliteration discovery (``translit``, LCLR §5.1): :class:`TransliterationTask`.

Parameters, reading (the CLDR default data or Wikidata TSV files, with sampled negatives),
fitting and featurising (delegated to the featurizer,
:class:`~latentstruct.tasks.translit.featurizer.TranslitFeaturizer`, which learns the
character alphabets), evaluation by ranking, and persistence.  The task holds its structure,
a :class:`~latentstruct.tasks.translit.structure.TranslitStructure` built from the fitted
alphabets (``structure_``: decoding, Phi and the weight layout); the model is described in
:mod:`latentstruct.tasks.translit`.
"""

from __future__ import annotations

import numpy as np

from ...data.atomic import atomic_write
from ...data.translit import LANGUAGES, check_language, cldr_pairs, read_translit_tsv
from ...exceptions import ConfigError, InputError, ModelFormatError, check_is_fitted
from ...params import BOOL, Interval, Satisfies
from ..base import ComposedBinaryTask, Dataset, register_task
from ..contracts import EXPLAINABLE, HEURISTIC, LATENT_BINARY, RANDOM_TIES
from ..pairs.featurizer import encode_binary_targets
from ..validation import binary_predictions
from .corpus import TranslitCorpus
from .data import CldrRecords, dominant_script, ranking_metrics, sample_negatives
from .featurizer import TranslitFeaturizer, check_word_pairs
from .raw import translit_dataset
from .structure import TranslitStructure, check_word_pair

__all__ = ["TransliterationTask", "MAX_NEGATIVES"]

_SPLITS = ("train", "test")
#: refuse to build more negative pairs than this in ``read`` (memory)
MAX_NEGATIVES = 10_000_000


#: the language of the default (CLDR) data written in each script
_SCRIPT_LANG = {"HEBREW": "he", "CYRILLIC": "ru", "ARABIC": "ar"}


# --------------------------------------------------------------------------------------
# the task
# --------------------------------------------------------------------------------------
@register_task
class TransliterationTask(ComposedBinaryTask):
    """Transliteration discovery over latent monotone character alignments (LCLR §5.1).

    Parameters
    ----------
    lang : {"he", "ru", "ar"}, default "he"
        Target language of the default (CLDR) data.  May change at evaluation; evaluating
        on default data written in another script than the training targets (see
        :meth:`target_script`) is refused.
    n_train : int or None, default 250
        Positive training pairs.  With the CLDR data (``read(None)``) the train split is the
        first ``n_train`` pairs of a seeded permutation; with a TSV file a seeded sample of
        ``n_train`` pairs.  0 or None: all (with CLDR, all pairs not in the test split).
    n_test : int or None, default 300
        Test pairs: the last ``n_test`` of the same CLDR permutation (disjoint from the
        train split), or a seeded sample of a TSV file.  0 or None: all.
    neg_ratio : float in [0, 1], default 0.1
        Training negatives: ``round(neg_ratio * n_pos * (n_pos - 1))`` wrong pairings of a
        source with another positive's target, drawn without replacement (the paper samples
        10%).
    seed : int, default 0
        Seed of the permutation, the samples and the negatives.
    bigrams : bool, default True
        Add the two bigram-mapping blocks to the unigram mappings.

    Notes
    -----
    Characters are lowercased one by one (when that keeps one character) before lookup.

    Data in memory (:meth:`make_dataset`): ``X`` is a list of ``(source, target)`` word
    pairs (strings), ``y`` their labels (+1/-1, 1/0 or True/False; 1 = a transliteration)
    or None; ``decode_predictions`` gives +1/-1 ints::

        task = TransliterationTask()
        data = task.make_dataset([("paris", "פריז"), ("london", "לונדון"),
                                  ("paris", "לונדון")], [1, 1, -1])

    Your own character-pair scores: an example may be ``(source, target, scores)`` with
    ``scores`` an (m x n) or (m x n x k) array over the characters of the two words (see
    :meth:`with_pair_scores`).  Score q of cell (i, j) is a real feature of aligning source
    character i with target character j, weighted by the last k entries of w.  A model
    fitted with scores records ``n_pair_scores_`` (k; 0 without), needs scores on every
    pair it scores, and is evaluated by binary accuracy only (the ranking's cross pairs
    have no scores).
    """

    name = "translit"
    has_default_data = True
    default_learner = "lclr"
    capabilities = frozenset({LATENT_BINARY, HEURISTIC, RANDOM_TIES, EXPLAINABLE})
    #: the structure the task holds (``structure_``): alignments, Phi, the weight layout
    structure_class = TranslitStructure
    #: the test split's size and language (of the default data) may change at evaluation;
    #: everything else fed training
    evaluation_params = frozenset({"n_test", "lang"})

    def __init__(self, lang="he", n_train=250, n_test=300, neg_ratio=0.1, seed=0, bigrams=True):
        self.lang = lang
        self.n_train = n_train
        self.n_test = n_test
        self.neg_ratio = neg_ratio
        self.seed = seed
        self.bigrams = bigrams

    #: what each parameter may be (``latentstruct.params``), checked on entering ``fit``
    #: and ``read``
    _parameter_constraints = {
        "lang": [Satisfies(lambda v: check_language(v) is not None,
                           "a language code among " + ", ".join(sorted(LANGUAGES)))],
        "n_train": [Interval(int, 0), None],
        "n_test": [Interval(int, 0), None],
        "neg_ratio": [Interval(float, 0, 1)],
        "seed": [Interval(int, 0)],
        "bigrams": [BOOL],
    }

    # --- reading --------------------------------------------------------------------------
    def read(self, path, *, split: str = "train") -> Dataset:
        """Word pairs with labels +-1.

        ``path=None`` reads the CLDR pairs of ``lang`` (:func:`~latentstruct.data.translit.
        cldr_pairs`), otherwise a Wikidata TSV file.  ``split="train"`` adds the sampled
        negatives after the positives; ``split="test"`` gives positives only (evaluation
        ranks every source against every test target).  Deterministic given ``seed``.
        """
        self.check_params()
        if split not in _SPLITS:
            raise ConfigError(f"split must be one of: {', '.join(_SPLITS)}; got {split!r}")
        if path is None:
            positives = self._cldr_split(split)
        else:
            pairs = read_translit_tsv(path)
            n = self.n_train if split == "train" else self.n_test
            if not n or n >= len(pairs):
                positives = pairs
            else:
                rng = np.random.default_rng([self.seed, _SPLITS.index(split)])
                idx = np.sort(rng.choice(len(pairs), size=n, replace=False))
                positives = [pairs[i] for i in idx.tolist()]
        records = list(positives) if path is not None else CldrRecords(positives)
        if split == "train":
            n = len(positives)
            k = round(self.neg_ratio * n * (n - 1))
            if k > MAX_NEGATIVES:
                raise ConfigError(
                    f"neg_ratio={self.neg_ratio} with {n} positive pairs asks for {k} negatives, "
                    f"more than {MAX_NEGATIVES}; lower n_train or neg_ratio"
                )
            rng = np.random.default_rng([self.seed, 2])
            records += sample_negatives(positives, k, rng)
        targets = np.ones(len(records), dtype=np.int64)
        targets[len(positives):] = -1
        return Dataset(records, targets, None if path is None else str(path))

    def make_dataset(self, X, y=None) -> Dataset:
        """Word pairs from memory: the in-memory twin of :meth:`read`.

        ``X``: a list of ``(source, target)`` pairs of strings, one name per side (no white
        space inside a word: split multi-word names into one pair per word); ``y``: one
        binary label per pair (+1/-1, 1/0 or True/False, 1 = a transliteration), or None
        for pairs to predict.  Each word goes through the TSV reader's check
        (:func:`~latentstruct.data.translit.clean_word`: direction marks removed, the source
        lowercased, at most ``MAX_WORD_CHARS`` characters), so the records equal those
        ``read`` gives for a file of the same pairs.

        Unlike ``read``, nothing is sampled: ``n_train``, ``n_test``, ``neg_ratio`` and
        ``seed`` do not apply, and the negatives are the pairs labelled -1 (give both
        classes to train).  ``evaluate`` of the labels gives the accuracy of +-1
        predictions; ``evaluate_model`` ranks every positive pair's target among the
        positive targets (MRR), as it does for a test file.  A bad pair is an
        ``InputError`` naming ``X[i]`` (``X[i][0]`` the source, ``X[i][1]`` the target) or
        ``y[i]``.
        """
        return translit_dataset(X, y)

    def decode_predictions(self, predictions) -> list:
        """``predict``'s +-1 labels as a list of Python ints +1 / -1."""
        return binary_predictions(predictions)

    def _cldr_split(self, split: str) -> list[tuple[str, str]]:
        pairs = cldr_pairs(self.lang)
        N = len(pairs)
        n_tr, n_te = self.n_train or None, self.n_test or None
        if n_tr is None and n_te is None:
            raise ConfigError(
                "with the CLDR data n_train and n_test cannot both be 0/None: train takes the "
                "first n_train and test the last n_test pairs of one permutation"
            )
        n_tr = N - n_te if n_tr is None else int(n_tr)
        n_te = N - n_tr if n_te is None else int(n_te)
        if n_tr + n_te > N:
            raise ConfigError(
                f"CLDR gives {N} English-{self.lang} pairs, fewer than n_train + n_test = "
                f"{n_tr} + {n_te} = {n_tr + n_te}; lower n_train or n_test"
            )
        perm = np.random.default_rng(self.seed).permutation(N)
        idx = perm[:n_tr] if split == "train" else perm[N - n_te:]
        return [pairs[i] for i in idx.tolist()]

    # --- fitting ----------------------------------------------------------------------------
    def fit(self, dataset: Dataset) -> "TransliterationTask":
        """Fit the featurizer (``featurizer_``: the source and target alphabets of the
        training words and the number of score columns)."""
        if len(dataset) == 0:
            raise InputError("training data contains no pairs", dataset.path)
        self.featurizer_ = TranslitFeaturizer().fit(dataset)
        self._build_structure()
        return self

    def _new_structure(self) -> TranslitStructure:
        """The structure of the fitted featurizer's alphabets and score columns."""
        return self.structure_class.from_featurizer(self.featurizer_, bool(self.bigrams))

    def _fitted_featurizer(self) -> TranslitFeaturizer:
        check_is_fitted(self)
        return self.featurizer_

    @property
    def source_alphabet_(self) -> list[str]:
        """The source characters, sorted (``featurizer_``'s; id = position + 1)."""
        return self._fitted_featurizer().source_alphabet_

    @property
    def target_alphabet_(self) -> list[str]:
        """The target characters, sorted (``featurizer_``'s; id = position + 1)."""
        return self._fitted_featurizer().target_alphabet_

    @property
    def n_pair_scores_(self) -> int:
        """k, the user's scores per character pair the model was fitted with (0: none)."""
        f = self.__dict__.get("featurizer_")
        if f is None:
            raise AttributeError("n_pair_scores_")
        return f.n_pair_scores_

    @property
    def n_scores(self) -> int:
        """k: the user's scores per character pair the model was fitted with (0 without)."""
        f = self.__dict__.get("featurizer_")
        return 0 if f is None else int(f.n_pair_scores_)

    def with_pair_scores(self, X, f) -> list[tuple]:
        """``[(source, target, f(source_chars, target_chars)), ...]``: the pairs of ``X``
        with the scores of the function ``f`` over their characters (lists of one-character
        strings, the source cleaned as :meth:`make_dataset` cleans it), an (m x n) or
        (m x n x k) array per pair.  The model never stores ``f``; give the same ``f``
        again at prediction.  Needs no fitting."""
        if not callable(f):
            raise InputError(f"f must be a function f(source_chars, target_chars) -> (m x n) "
                             f"array, got {type(f).__name__}")
        data = self.make_dataset([tuple(x[:2]) if isinstance(x, (tuple, list)) else x for x in X])
        out = []
        for i, (a, b) in enumerate(data.records):
            S = np.asarray(f(list(a), list(b)), dtype=np.float64)
            if S.ndim not in (2, 3) or S.shape[:2] != (len(a), len(b)):
                raise InputError(f"f returned shape {S.shape} for X[{i}], expected "
                                 f"({len(a)}, {len(b)}) or ({len(a)}, {len(b)}, k): one row per "
                                 f"character of {list(a)}, one column per character of {list(b)}")
            out.append((a, b, S))
        return out

    # --- featurising ----------------------------------------------------------------------
    def make_pairs(self, sources, targets, pairs=None, pair_scores=None) -> TranslitCorpus:
        """Encode word lists once (:meth:`TranslitFeaturizer.make_pairs`); pair k is
        (sources[pair_src[k]], targets[pair_tgt[k]]), all cross pairs when ``pairs=None``."""
        return self._fitted_featurizer().make_pairs(sources, targets, pairs, pair_scores)

    def featurize(self, dataset: Dataset) -> TranslitCorpus:
        """The dataset's pairs, each distinct source and target word encoded once
        (``featurizer_.transform``)."""
        return self._fitted_featurizer().transform(dataset)

    def cross_corpus(self, dataset: Dataset) -> TranslitCorpus:
        """All n x n pairs (source i, target j) of the dataset's records, (i, j) at i*n + j."""
        check_word_pairs(dataset.records, dataset.path)
        return self.make_pairs([s for s, _ in dataset.records], [t for _, t in dataset.records])

    def encode_pair(self, source: str, target: str) -> TranslitCorpus:
        """One raw word pair, featurised (characters unseen in training get id 0); a bad
        word is an InputError before the task is asked to be fitted."""
        check_word_pair(source, target)
        return self.structure_object().encode_pair(source, target)

    def encode_targets(self, targets) -> np.ndarray:
        return encode_binary_targets(targets)

    # --- evaluation -----------------------------------------------------------------------
    def evaluate_model(self, dataset: Dataset, predict, decision_function=None) -> dict:
        """Rank every positive test target for every positive test source (LCLR §5.1).

        ``decision_function`` scores the n x n cross pairs (:meth:`cross_corpus`); see
        :func:`ranking_metrics` for the pessimistic tie rule.  A candidate whose target word
        equals the correct one is not a competitor.  Returns ``{"mrr", "accuracy"}``.

        A model fitted with the user's character-pair scores cannot rank: the cross pairs
        (source i, target j != i) have no scores.  It is evaluated by the binary accuracy of
        ``predict`` on the dataset's own (scored) pairs instead: ``{"accuracy"}``.
        """
        if self.n_scores:
            return self.evaluate_raw(dataset.targets, predict(self.featurize(dataset)))
        if decision_function is None:
            raise ConfigError(
                "transliteration discovery is evaluated by ranking candidates; evaluate_model "
                "needs decision_function (real-valued scores), not only predict"
            )
        if self._is_default_data(dataset):  # chosen by lang rather than by the user
            self.check_script(dataset)
        y = self.encode_targets(dataset.targets)
        if y.shape[0] != len(dataset.records):
            raise InputError(f"{len(dataset.records)} records but {y.shape[0]} targets", dataset.path)
        pos = [rec for rec, label in zip(dataset.records, y.tolist()) if label > 0]
        if not pos:
            raise InputError("no positive pairs to rank", dataset.path)
        n = len(pos)
        scores = np.asarray(decision_function(self.cross_corpus(Dataset(pos, [1] * n))),
                            dtype=np.float64)
        if scores.shape != (n * n,):
            raise InputError(f"decision_function returned shape {scores.shape}, expected ({n * n},)")
        tgt = np.array([t for _, t in pos], dtype=object)
        same = tgt[:, None] == tgt[None, :]
        return ranking_metrics(scores.reshape(n, n), same)

    def target_script(self) -> str | None:
        """The Unicode script of the training targets (``"CYRILLIC"``, ``"HEBREW"``, ...):
        the commonest among the letters of the target alphabet."""
        check_is_fitted(self)
        return dominant_script(self.target_alphabet_)

    @staticmethod
    def _is_default_data(dataset: Dataset) -> bool:
        """Whether ``dataset`` is the default (CLDR) data, chosen by ``lang`` rather than
        by the user (``read(None)`` marks its records); a file or pairs given in memory
        (``make_dataset``) are the user's own choice."""
        return isinstance(dataset.records, CldrRecords)

    def check_script(self, dataset: Dataset, *, command: str = "evaluate") -> None:
        """InputError when the targets of ``dataset`` (the default data ``lang`` picks) are
        in another script than the model's (scores across scripts rank by chance).
        ``evaluate_model`` runs it on the default test data, ``latentstruct explain`` when
        ``--option lang`` is given (``command`` names the command in the fix)."""
        trained = self.target_script()
        found = dominant_script(c for _, t in dataset.records for c in t)
        if trained is None or found is None or trained == found:
            return
        lang = _SCRIPT_LANG.get(trained)
        if command == "evaluate":
            fix = (f"pass --option lang={lang} to evaluate on the CLDR English-{lang} names"
                   if lang else "pass --test FILE with pairs in that script") + ", or --test FILE"
        else:
            fix = (f"pass --option lang={lang} or " if lang else "") + \
                f"leave --option lang out ({command} reads no test data)"
        raise InputError(
            f"this model was trained on {trained.title()} targets but the default test data "
            f"(CLDR English-{self.lang} names, lang={self.lang!r}) is {found.title()}, so its "
            f"ranking would be chance; {fix}")

    def evaluate(self, targets, predictions) -> dict:
        """Binary accuracy of +-1 label predictions."""
        y = self.encode_targets(targets)
        p = np.asarray(predictions)
        if p.shape != y.shape:
            raise InputError(f"{y.shape[0]} targets but predictions have shape {p.shape}")
        return {"accuracy": float(np.mean(y == p)) if y.size else 0.0}

    def write_predictions(self, path, dataset: Dataset, predictions) -> None:
        """Write ``source<TAB>target<TAB>label`` lines (label 1 or -1), atomically."""
        p = np.asarray(predictions)
        if p.shape != (len(dataset.records),):
            raise InputError(
                f"{len(dataset.records)} pairs but predictions have shape {p.shape}")
        if p.size and not np.isin(p, (-1, 1)).all():
            raise InputError("predictions must be labels -1 or +1")
        check_word_pairs(dataset.records, dataset.path)
        with atomic_write(path) as fh:
            for (s, t), label in zip(dataset.records, p.tolist()):
                fh.write(f"{s}\t{t}\t{int(label)}\n")

    # --- persistence ----------------------------------------------------------------------
    def get_state(self):
        check_is_fitted(self)
        return {"source_alphabet": list(self.source_alphabet_),
                "target_alphabet": list(self.target_alphabet_),
                "n_pair_scores": self.n_scores}, {}

    @classmethod
    def from_state(cls, params, state, arrays):
        task = cls(**params)
        alphabets = []
        for key in ("source_alphabet", "target_alphabet"):
            chars = state.get(key) if isinstance(state, dict) else None
            if (not isinstance(chars, list) or not all(isinstance(c, str) and len(c) == 1 for c in chars)
                    or len(set(chars)) != len(chars)):
                raise ModelFormatError(
                    f"task state {key!r} must be a list of distinct single characters, got "
                    f"{chars!r}"
                )
            alphabets.append(chars)
        k = state.get("n_pair_scores", 0)  # models from before issue 43 have none
        if isinstance(k, bool) or not isinstance(k, int) or k < 0:
            raise ModelFormatError(f"task state n_pair_scores must be a non-negative integer, "
                                   f"got {k!r}")
        task.featurizer_ = TranslitFeaturizer.from_alphabets(*alphabets, k)
        task._build_structure()
        return task
