"""Paraphrase identification on MSRP (``paraphrase``, LCLR §5.3).

The task is :class:`~latentstruct.tasks.pairs.GraphPairTask` with every variable type of
§4; this module adds its parameters, the Extended data set (the longer sentence doubled)
and the reading of MSRP's train and held-out dev splits.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from ...data.pairs import read_msrp
from ...exceptions import ConfigError
from ...params import Interval
from ..base import Dataset, register_task
from .task import GraphPairTask, file_paths

__all__ = ["ParaphraseTask"]


@register_task
class ParaphraseTask(GraphPairTask):
    """Paraphrase identification on MSRP (LCLR §5.3): every variable type of §4.

    ``read(path, split)`` reads an MSRP TSV file.  MSRP has no dev split and its test file
    is held back, so a deterministic dev split is held out of the file: a permutation of
    its pairs seeded by ``seed``; the last ``round(dev_fraction * N)`` positions form the dev
    split (``split="test"``) and the rest the training split (``split="train"``), each kept
    in file order.  ``dev_fraction=0`` uses the whole file for either split (e.g. to evaluate
    on the official test file).  ``n_train`` / ``n_test`` then draw seeded samples of the
    training / dev split.

    ``extended=True`` is the Extended data set of §5.3: in every pair (train and test) the
    longer sentence (more graph nodes; the first on a tie) is concatenated with itself —
    two disjoint copies of its graph, which is what parsing "S S" as two sentences gives —
    and ``n_train=None`` then means 500 sampled training pairs, as in the paper (an explicit
    ``n_train`` wins).  Without ``extended``, ``n_train=None`` means all.

    Parameters
    ----------
    dev_fraction : float, default 0.2
        Fraction of the file's pairs held out as the dev split (0: the whole file).
    extended : bool, default False
        Build the Extended data set of §5.3 (the longer sentence doubled).
    ne_features, edit_features, negation_features, dep_label_features, edge_sim_features : bool, default True
    coref_features, pa_edges, edge_node_features : bool, default False

    Notes
    -----
    The feature resources are described in :class:`GraphPairTask`; the defaults are Table 2's
    paraphrase column (NE, ED, DEP) plus negation and edge similarity.

    Data in memory (:meth:`~GraphPairTask.make_dataset`): ``X`` is a list of
    ``(text_a, text_b)`` sentence pairs, ``y`` their labels (+1/-1, 1/0 or True/False;
    1 = paraphrase) or None; ``decode_predictions`` gives +1/-1 ints::

        task = ParaphraseTask()
        data = task.make_dataset(
            [("The cat sat on the mat.", "A cat was sitting on the mat."),
             ("Stocks rose sharply.", "The film opens on Friday.")], [1, 0])
    """

    name = "paraphrase"
    EXTENDED_N_TRAIN: ClassVar[int] = 500

    evaluation_params = GraphPairTask.evaluation_params | {"dev_fraction"}

    def __init__(self, top_k=3, n_train=None, n_test=None, seed=0, dev_fraction=0.2,
                 extended=False, min_affinity=0.0, normalize=True, use_wordnet=True, heuristic_threshold=0.5,
                 time_limit=10.0, min_count=1, pipeline="en_core_web_sm", cache_dir=None,
                 ne_features=True, edit_features=True, negation_features=True, coref_features=False,
                 dep_label_features=True, pa_edges=False, edge_sim_features=True,
                 edge_node_features=False):
        self.top_k = top_k
        self.n_train = n_train
        self.n_test = n_test
        self.seed = seed
        self.dev_fraction = dev_fraction
        self.extended = extended
        self.min_affinity = min_affinity
        self.normalize = normalize
        self.use_wordnet = use_wordnet
        self.heuristic_threshold = heuristic_threshold
        self.time_limit = time_limit
        self.min_count = min_count
        self.pipeline = pipeline
        self.cache_dir = cache_dir
        self.ne_features = ne_features
        self.edit_features = edit_features
        self.negation_features = negation_features
        self.coref_features = coref_features
        self.dep_label_features = dep_label_features
        self.pa_edges = pa_edges
        self.edge_sim_features = edge_sim_features
        self.edge_node_features = edge_node_features

    _parameter_constraints = {**GraphPairTask._parameter_constraints,
                              "dev_fraction": [Interval(float, 0, 1, closed="left")]}

    def read(self, path, *, split: str = "train") -> Dataset:
        """MSRP pairs of the train or dev split (see the class docstring), labels +-1."""
        self.check_params()
        self._check_split(split)
        paths = file_paths(path)
        if len(paths) != 1:
            raise ConfigError(f"task 'paraphrase' reads one MSRP TSV file, got {path!r}")
        pairs = read_msrp(paths[0])
        N = len(pairs)
        n_dev = int(round(self.dev_fraction * N))
        if n_dev:
            perm = np.random.default_rng(self.seed).permutation(N)
            chosen = np.sort(perm[N - n_dev:] if split == "test" else perm[:N - n_dev])
            pairs = [pairs[i] for i in chosen.tolist()]
        if split == "train":
            n = self.n_train
            if n is None and self.extended:
                n = self.EXTENDED_N_TRAIN
            pairs = self._sample(pairs, n, [self.seed, 1])
        else:
            pairs = self._sample(pairs, self.n_test, [self.seed, 2])
        return self._dataset(pairs, str(paths[0]))
