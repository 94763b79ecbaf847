"""Recognising textual entailment (``rte``, LCLR §5.2): text against hypothesis.

The task is :class:`~latentstruct.tasks.pairs.GraphPairTask` with hypothesis-side pruning
and no text-deletion or edge-deletion variables; this module adds its parameters and the
reading of PASCAL RTE XML and GLUE RTE files, with repeated pairs and pairs seen in
training removed.
"""

from __future__ import annotations

import os

from ...data.pairs import SentencePair, read_glue_rte, read_rte_xml
from ...exceptions import ConfigError, InputError
from ..base import Dataset, register_task
from .graphs import pair_digest
from .task import GraphPairTask, file_paths

__all__ = ["RteTask"]


@register_task
class RteTask(GraphPairTask):
    """Recognising textual entailment (LCLR §5.2): G1 = text, G2 = hypothesis.

    Word mapping, hypothesis word deletion and edge mapping (no text deletion variables and
    no edge deletion, Table 2); candidate mappings are pruned from the hypothesis side only.

    ``read(path, split)`` reads PASCAL RTE XML (``.xml``) or GLUE RTE TSV files; ``path``
    may also be a list of such files (their pairs are concatenated).  Identical pairs
    (same text and hypothesis after lower-casing and collapsing whitespace) are kept once.
    ``split="test"`` of a *fitted* task also drops every pair identical to one of the
    training pairs it was fitted on (their digests are saved with the model), so e.g. GLUE
    dev — which contains RTE-1/2/3 development pairs — can test a model trained on the
    RTE-1/2/3 dev XML files without sharing a pair.  ``n_train`` / ``n_test`` draw seeded
    samples afterwards.

    Parameters
    ----------
    negation_features, edge_sim_features : bool, default True
    ne_features, edit_features, dep_label_features, coref_features, pa_edges, edge_node_features : bool, default False

    Notes
    -----
    The feature resources are described in :class:`GraphPairTask`.  Table 2's RTE column is
    WordNet, POS, Coref and Neg for word mappings and NODE-INFO for edges; Coref is off by
    default (a rule-based stand-in, see ``coref_features``); NE, ED and DEP are the
    paraphrase column's extras, available here for ablations.

    Data in memory (:meth:`~GraphPairTask.make_dataset`): ``X`` is a list of
    ``(text, hypothesis)`` pairs, ``y`` their labels (+1/-1, 1/0 or True/False;
    1 = the text entails the hypothesis) or None; ``decode_predictions`` gives +1/-1 ints::

        task = RteTask()
        data = task.make_dataset(
            [("Paris is the capital of France.", "Paris is in France."),
             ("Paris is the capital of France.", "Paris is in Spain.")], [1, 0])
    """

    name = "rte"
    raw_names = ("text", "hypothesis")
    delete_nodes1 = False
    delete_nodes2 = True
    edge_deletion = False
    prune_both_sides = False
    symmetric = False

    def __init__(self, top_k=3, n_train=None, n_test=None, seed=0, min_affinity=0.0,
                 normalize=True, use_wordnet=True, heuristic_threshold=0.5, time_limit=10.0, min_count=1,
                 pipeline="en_core_web_sm", cache_dir=None, ne_features=False, edit_features=False,
                 negation_features=True, coref_features=False, dep_label_features=False,
                 pa_edges=False, edge_sim_features=True, edge_node_features=False):
        self.top_k = top_k
        self.n_train = n_train
        self.n_test = n_test
        self.seed = seed
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

    @staticmethod
    def read_file(path) -> list[SentencePair]:
        """One RTE file: ``.xml`` as PASCAL RTE XML, anything else as GLUE RTE TSV."""
        if os.fspath(path).lower().endswith(".xml"):
            return read_rte_xml(path)
        return read_glue_rte(path)

    def read(self, path, *, split: str = "train") -> Dataset:
        """RTE pairs (see the class docstring), labels +-1 (+1 = entailment)."""
        self.check_params()
        self._check_split(split)
        paths = file_paths(path)
        if not paths:
            raise ConfigError("task 'rte' needs at least one RTE XML or GLUE RTE TSV file")
        pairs, seen = [], set()
        exclude = set()
        if split == "test" and getattr(self, "fitted_", False):
            exclude = {bytes(row) for row in self.train_digests_}
        for p in paths:
            for pair in self.read_file(p):
                d = pair_digest(pair.first, pair.second)
                if d in seen or d in exclude:
                    continue
                seen.add(d)
                pairs.append(pair)
        where = ", ".join(str(p) for p in paths)
        if not pairs:
            raise InputError("no pairs left after removing the pairs the model was trained on", where)
        if split == "train":
            pairs = self._sample(pairs, self.n_train, [self.seed, 1])
        else:
            pairs = self._sample(pairs, self.n_test, [self.seed, 2])
        return self._dataset(pairs, where)
