"""Decoding glue of the graph-pair tasks: part scores, the ILP argmax, Phi(x, h), the
two-stage heuristic weights and ``explain``.

:class:`GraphAlignmentDecoding` is a mixin of the graph-pair tasks' structure,
:class:`~latentstruct.tasks.pairs.structure.GraphPairStructure`; it relies on its
``n_features``, ``feature_index_``, ``n_pair_scores_``, ``delete_nodes1`` / ``delete_nodes2``
and ``heuristic_threshold``, and on examples being
:class:`~latentstruct.tasks.pairs.GraphPair` objects.  Structures are described in
:mod:`latentstruct.tasks.pairs` ("Structures", "Two-stage heuristic").
"""

from __future__ import annotations

import numpy as np

from ...data.sparse import SparseVector
from ...exceptions import InferenceError, InputError, check_is_fitted
from ...inference.graph_alignment import GraphAlignment, GraphPartScores, alignment_vector
from ...inference.result import DecodeResult
from .graphs import GraphPair
from .scores import score_feature_names

__all__ = ["GraphAlignmentDecoding"]


class GraphAlignmentDecoding:
    """The latent-binary model interface of a graph-pair task (see the module docstring)."""

    # --- model interface ------------------------------------------------------------------
    def _check_w(self, w) -> np.ndarray:
        w = np.ascontiguousarray(w, dtype=np.float64)
        if w.shape != (self.n_features,):
            raise InputError(f"weight vector must have shape ({self.n_features},), got {w.shape}")
        return w

    @staticmethod
    def _check_x(x) -> GraphPair:
        if not isinstance(x, GraphPair):
            raise InputError(
                f"expected a featurised sentence pair (GraphPair, from featurize or encode_pair), "
                f"got {type(x).__name__}")
        return x

    def part_scores(self, x: GraphPair, w) -> GraphPartScores:
        """theta_s = w . phi_s for every variable of ``x``."""
        check_is_fitted(self)
        x = self._check_x(x)
        return GraphPartScores.from_vector(x.problem, x.features @ self._check_w(w))

    def decode(self, x: GraphPair, w) -> DecodeResult:
        """The ILP's result: a legal :class:`GraphAlignment` and its part-score sum (no bias)."""
        check_is_fitted(self)
        x = self._check_x(x)
        # the flat part-score vector straight to the decoder (= part_scores(x, w), unsplit)
        res = x.ilp.solve_vector(x.features @ self._check_w(w))
        if res.structure is None:
            raise InferenceError(
                f"graph-alignment ILP of pair {x.pair_id!r} returned status {res.status!r} "
                f"without an alignment ({res.stats}); raise time_limit")
        return res

    def latent_argmax(self, x, w, *, random_state=None) -> DecodeResult:
        """Best alignment as ``a`` (see "Structures"), score w . Phi(x, a) with the bias.

        ``random_state`` is accepted for the interface and ignored: HiGHS and the matching
        stage break ties deterministically (the same call gives the same alignment)."""
        w = self._check_w(w)
        res = self.decode(x, w)
        a = np.full(x.n1, -1, dtype=np.int64)
        mp = res.structure.mapped_pairs
        a[mp[:, 0]] = mp[:, 1]
        return DecodeResult(a, float(w[0] + res.score), res.status, res.stats)

    def node_map(self, x: GraphPair, h) -> np.ndarray:
        """The 0/1 word-mapping vector over ``x.problem.node_pairs`` of the structure ``h``."""
        x = self._check_x(x)
        a = np.asarray(h)
        if a.shape != (x.n1,) or (x.n1 and not np.issubdtype(a.dtype, np.integer)):
            raise InputError(f"structure must be an integer array of shape ({x.n1},), got {h!r}")
        v = np.zeros(x.problem.n_node_pairs, dtype=np.int64)
        for i, j in enumerate(a.tolist()):
            if j < 0:
                if j != -1:
                    raise InputError(f"structure entries must be -1 or a G2 word, got {j}")
                continue
            p = x.pair_index.get((i, j))
            if p is None:
                raise InputError(f"word pair ({i}, {j}) is not a candidate mapping of pair {x.pair_id!r} "
                                 "(it was pruned)")
            v[p] = 1
        return v

    def alignment(self, x: GraphPair, h) -> GraphAlignment:
        """The full legal alignment whose word mappings are ``h``."""
        return GraphAlignment.from_node_map(x.problem, self.node_map(x, h))

    def latent_feature(self, x, h) -> SparseVector:
        """Phi(x, h): the bias plus the features of every active variable."""
        check_is_fitted(self)
        x = self._check_x(x)
        on = alignment_vector(x.problem, self.node_map(x, h)).astype(np.float64)
        # sum of the active variables' feature rows (scipy's CSC product adds them in row
        # order, as a row gather would; about 5x faster on MSRP pairs), then the bias
        dense = x.features.T @ on
        dense[0] += 1.0
        idx = np.flatnonzero(dense)
        return SparseVector(idx, dense[idx])

    def heuristic_weights(self) -> np.ndarray:
        """The two-stage WNSim objective (:mod:`latentstruct.tasks.pairs`, "Two-stage
        heuristic")."""
        check_is_fitted(self)
        idx = self.feature_index_
        w = np.zeros(self.n_features)
        n_del_sides = int(self.delete_nodes1) + int(self.delete_nodes2)
        w[idx.lookup("map:wnsim")] = 1.0
        w[idx.lookup("del:const")] = -0.1
        w[idx.lookup("map:const")] = -float(self.heuristic_threshold) - 0.1 * n_del_sides
        k = int(getattr(self, "n_pair_scores_", 0))
        for name in score_feature_names(k):  # the user's scores: their mean adds to WNSim
            w[idx.lookup(name)] = 1.0 / k
        return w

    # --- explanations ----------------------------------------------------------------------
    def cell_scores(self, x, w) -> np.ndarray:
        """(n1, n2) word-mapping part scores; ``-inf`` where the pair was pruned."""
        x = self._check_x(x)
        s = self.part_scores(x, w)
        out = np.full((x.n1, x.n2), -np.inf)
        pairs = x.problem.node_pairs
        out[pairs[:, 0], pairs[:, 1]] = s.node_map
        return out

    def explain(self, x, w, h=None) -> dict:
        """The alignment ``h`` of one pair with every active part's score, as JSON-able data.

        ``h`` (the structure of :meth:`latent_argmax`: G1 word -> G2 word or -1) defaults to
        the argmax under ``w``; pass the learner's own choice (a two-stage model keeps its
        heuristic alignment).  Drawn by :func:`latentstruct.plotting.draw_explanation`.

        Returns a dict of plain Python values (``json.dumps`` works):

        ``kind``
            ``"graph-alignment"``.
        ``words1``, ``words2``
            The tokens of G1 (first sentence / text) and G2 (second / hypothesis).
        ``edges1``, ``edges2``
            ``[head, dependent, label]`` dependency edges.
        ``mapped_pairs``
            ``[i, j, part score]`` for every word mapping that is on.
        ``mapped_edges``
            ``[G1 edge, G2 edge, part score]`` for every edge mapping that is on.
        ``word_deletions1``, ``word_deletions2``
            ``[word, part score]`` for every word-deletion variable that is on (none for the
            text of RTE, whose words have no deletion variables).
        ``edge_deletions1``, ``edge_deletions2``
            ``[edge, part score]`` for every edge-deletion variable that is on (none for RTE).
        ``deleted1``, ``deleted2``, ``deleted_edges1``, ``deleted_edges2``
            Indices of the words / edges without a mapping.
        ``bias``
            The bias weight, which every alignment scores.
        ``score``
            w . Phi(x, h) = bias + the sum of all part scores listed above; for the model's
            own alignment this is its decision value.
        """
        x = self._check_x(x)
        w = self._check_w(w)
        if h is None:
            h = self.latent_argmax(x, w).structure
        al = self.alignment(x, h)
        s = self.part_scores(x, w)
        p = x.problem

        def on(name) -> list[int]:
            return np.flatnonzero(getattr(al, name)).tolist()

        mapped = [[int(p.node_pairs[k, 0]), int(p.node_pairs[k, 1]), float(s.node_map[k])]
                  for k in on("node_map")]
        mapped_edges = [[int(p.edge_pairs[q, 0]), int(p.edge_pairs[q, 1]), float(s.edge_map[q])]
                        for q in on("edge_map")]
        m1 = {i for i, _, _ in mapped}
        m2 = {j for _, j, _ in mapped}
        e1 = {a for a, _, _ in mapped_edges}
        e2 = {b for _, b, _ in mapped_edges}
        return {
            "kind": "graph-alignment",
            "words1": [str(t) for t in x.g1.tokens], "words2": [str(t) for t in x.g2.tokens],
            "edges1": [[int(a), int(b), str(lab)]
                       for (a, b), lab in zip(x.g1.edges.tolist(), x.g1.labels)],
            "edges2": [[int(a), int(b), str(lab)]
                       for (a, b), lab in zip(x.g2.edges.tolist(), x.g2.labels)],
            "mapped_pairs": mapped, "mapped_edges": mapped_edges,
            "word_deletions1": [[k, float(s.del1[k])] for k in on("del1")],
            "word_deletions2": [[k, float(s.del2[k])] for k in on("del2")],
            "edge_deletions1": [[k, float(s.edge_del1[k])] for k in on("edge_del1")],
            "edge_deletions2": [[k, float(s.edge_del2[k])] for k in on("edge_del2")],
            "deleted1": [i for i in range(x.n1) if i not in m1],
            "deleted2": [j for j in range(x.n2) if j not in m2],
            "deleted_edges1": [e for e in range(p.n_edges1) if e not in e1],
            "deleted_edges2": [e for e in range(p.n_edges2) if e not in e2],
            "bias": float(w[0]),
            "score": float(self.latent_feature(x, h).dot(w)),
        }
