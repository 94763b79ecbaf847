"""The structure of the dependency task: the weight layout, arc scores, Phi(x, y), the loss,
the (loss-augmented) Eisner argmax and the k best trees.

:class:`DependencyStructure` is a small immutable object that
:class:`~latentstruct.tasks.dependency.DependencyTask` builds when it is fitted
(``structure_``) from its parameters ``hash_bits`` and ``label_hash_bits`` and what its
featurizer learned (the labels, whether they are predicted, the input kind and vector
width) and its resolved ``single_root_`` and distance bins.  Structures, the weight
layout and the loss are described in :mod:`latentstruct.tasks.dependency`.
"""

from __future__ import annotations

import numbers

import numpy as np

from ...data.sparse import SparseVector
from ...exceptions import ConfigError
from ...inference.eisner import eisner, eisner_kbest
from ...inference.result import DecodeResult
from ..base import MaxDecodableDefaults
from ..validation import check_heads, check_label_ids
from .corpus import DepCorpus, as_dep_corpus
from .features import (
    is_projective,
    phi_difference,
    score_batch,
    tree_ids_in_range,
    tree_label_score,
)
from .vectors import N_VECTOR_BLOCKS, add_vector_scores, vector_phi

__all__ = ["DependencyStructure"]

_EMPTY = np.zeros(0, np.int64)


class DependencyStructure(MaxDecodableDefaults):
    """The max-decodable structure of the dependency task (module docstring), built by a
    fitted :class:`~latentstruct.tasks.dependency.DependencyTask` from its values (keyword
    arguments only).

    Parameters
    ----------
    hash_bits, label_hash_bits : int
        The arc and label feature tables' sizes, 2**bits.
    labels : tuple of str
        The dependency relations (a label id is its position).
    labelled : bool
        Whether the structure predicts relations.
    single_root : bool
        Whether exactly one word attaches to ROOT.
    bins : ndarray
        The distance bins of the arc features.
    input_kind : {"tokens", "numbers"}
        Whether sentences carry vectors; ``n_columns`` their width.
    """

    def __init__(self, *, hash_bits, label_hash_bits, labels, labelled, single_root, bins,
                 input_kind, n_columns):
        bins = np.array(bins)
        bins.flags.writeable = False
        for name, value in (("hash_bits", int(hash_bits)),
                            ("label_hash_bits", int(label_hash_bits)),
                            ("labels", tuple(labels)), ("labelled", bool(labelled)),
                            ("single_root", bool(single_root)), ("bins", bins),
                            ("input_kind", str(input_kind)), ("n_columns", int(n_columns))):
            object.__setattr__(self, name, value)

    def __setattr__(self, name, value):
        raise AttributeError(f"a DependencyStructure is immutable; cannot set {name!r}")

    def __reduce__(self):
        return (_rebuild, (type(self), {k: getattr(self, k) for k in _FIELDS}))

    def __repr__(self) -> str:
        return (f"DependencyStructure({len(self.labels)} labels, labelled={self.labelled}, "
                f"n_features={self.n_features})")

    @property
    def n_labels(self) -> int:
        return len(self.labels)

    @property
    def n_arc_features(self) -> int:
        return 1 << int(self.hash_bits)

    @property
    def vector_offset(self) -> int:
        """Index of the first vector weight (after the hashed arc and label blocks)."""
        n = self.n_arc_features
        if self.labelled:
            n += self.n_labels << int(self.label_hash_bits)
        return n

    @property
    def n_features(self) -> int:
        return self.vector_offset + N_VECTOR_BLOCKS * int(self.n_columns)

    def subset(self, X, indices) -> DepCorpus:
        return as_dep_corpus(X).subset(indices)

    def as_batch(self, X) -> DepCorpus:
        return as_dep_corpus(X)

    def example_size(self, x) -> int:
        return as_dep_corpus(x).n_tokens

    # --- scores, Phi, loss and decoding --------------------------------------------------

    def _check_w(self, w) -> np.ndarray:
        w = np.asarray(w, dtype=np.float64)
        if w.shape != (self.n_features,):
            raise ValueError(f"weight vector must have shape ({self.n_features},), got {w.shape}")
        return w

    def _kernel_args(self):
        return (np.int64(self.n_arc_features - 1), np.int64(self.n_arc_features),
                np.int64((1 << int(self.label_hash_bits)) - 1),
                np.int64(self.n_labels if self.labelled else 0), self.bins)

    def _scores(self, X: DepCorpus, w, Y=None):
        mask, n_arc, lmask, L, bins = self._kernel_args()
        if Y is None:
            gh = gl = _EMPTY
        else:
            Y = list(Y)
            if len(Y) != len(X):
                raise ValueError(f"{len(X)} sentences but {len(Y)} gold trees")
            lengths = X.lengths()
            Y = [self._tree_ids(y, int(lengths[i]), f"gold tree {i}") for i, y in enumerate(Y)]
            gh = np.concatenate([y[0] for y in Y]) if Y else _EMPTY
            gl = np.concatenate([y[1] for y in Y]) if Y else _EMPTY
            if not self.labelled:
                gl = np.full_like(gh, -1)
        w = self._check_w(w)
        self._check_vectors(X)
        S, B, sq = score_batch(X.word, X.prefix, X.pos, X.offsets, w, mask, n_arc, lmask, L,
                               bins, gh, gl, Y is not None)
        if X.has_vectors:  # label-independent, so added to the folded scores
            add_vector_scores(S, sq, X.offsets, X.vec_ptr, X.vec_idx, X.vec_val,
                              w[self.vector_offset:], np.int64(X.n_columns))
        return S, B, sq

    def _check_vectors(self, X: DepCorpus) -> None:
        """Featurised sentences must carry vectors exactly when the model reads them."""
        if X.n_columns != self.n_columns or X.has_vectors != (self.input_kind == "numbers"):
            raise ValueError(f"featurised sentences with {X.n_columns} vector columns, but the "
                             f"model reads {self.n_columns}; featurise them with this task")

    def arc_scores(self, x, w, *, with_labels: bool = False):
        """The (n+1, n+1) arc scores of one sentence with the best label folded in.

        ``S[h, m]`` = arc(h, m) + max_l label(h, m, l) (-inf on the diagonal and in column 0;
        row/column 0 is ROOT).  With ``with_labels`` also the (n+1, n+1) int array of the
        maximising label ids (-1 when unlabelled).
        """
        x = self._one(x)
        S, B, sq = self._scores(x, w)
        n1 = int(x.offsets[1] - x.offsets[0])
        S = S.reshape(n1, n1)
        return (S, B.reshape(n1, n1).astype(np.int64)) if with_labels else S

    def _one(self, x) -> DepCorpus:
        x = as_dep_corpus(x)
        if len(x) != 1:
            raise ValueError(f"expected one featurised sentence, got {len(x)}")
        return x

    def _tree_ids(self, y, n: int, what: str) -> np.ndarray:
        """``y`` as int64 rows (heads, label ids, ...) checked before a kernel indexes with
        them: heads in 0..n, label ids in -1..L-1 (labels are ignored when unlabelled)."""
        if (isinstance(y, np.ndarray) and y.dtype == np.int64 and y.ndim == 2
                and y.shape[0] >= 2 and y.shape[1] == n):
            # fast path (every decode of every pass comes here): int64 rows in range
            L = self.n_labels if self.labelled else 0
            if tree_ids_in_range(y[0], y[1], n, L):
                return y[:2] if L else np.stack([y[0], np.full(n, -1, np.int64)])
        if np.ndim(y) != 2 or np.shape(y)[0] < 2 or np.shape(y)[1] != n:
            raise ValueError(f"{what} must have shape (3, {n}) (heads, labels, scored), got "
                             f"{np.shape(y)}")
        heads = check_heads(np.asarray(y)[0], n, what=f"{what}: heads")
        labels = np.asarray(y)[1]
        labels = check_label_ids(labels, self.n_labels, what=f"{what}: labels") \
            if self.labelled else np.full(n, -1, np.int64)
        return np.stack([heads, labels])

    def _phi(self, x: DepCorpus, y_a, y_b=None):
        mask, n_arc, lmask, L, bins = self._kernel_args()
        n = int(x.offsets[1] - x.offsets[0]) - 1
        ya = self._tree_ids(y_a, n, "structure")
        none = np.full(n, -1, np.int64)
        la = ya[1] if self.labelled else none
        if y_b is None:
            hb = lb = none
        else:
            yb = self._tree_ids(y_b, n, "structure y_b")
            hb, lb = yb[0], (yb[1] if self.labelled else none)
        phi = SparseVector(*phi_difference(x.word, x.prefix, x.pos, x.offsets[0], n + 1, ya[0],
                                           la, hb, lb, mask, n_arc, lmask, L, bins))
        self._check_vectors(x)
        if not x.has_vectors:
            return phi
        # the vector block is disjoint from the hashed ones: coalescing it alone keeps the
        # indices unique
        vec = SparseVector(*vector_phi(x.vec_ptr, x.vec_idx, x.vec_val, x.offsets[0], n + 1,
                                       ya[0], hb, np.int64(x.n_columns),
                                       np.int64(self.vector_offset))).coalesce()
        return SparseVector(np.concatenate([phi.indices, vec.indices]),
                            np.concatenate([phi.values, vec.values]))

    def joint_feature(self, x, y) -> SparseVector:
        """Phi(x, y): the arc features of every arc of y plus its label features, coalesced
        (unique indices, in no particular order)."""
        return self._phi(self._one(x), y)

    def joint_feature_difference(self, x, y_a, y_b) -> SparseVector:
        """Phi(x, y_a) - Phi(x, y_b), coalesced; words whose head and label agree cancel."""
        return self._phi(self._one(x), y_a, y_b)

    def loss(self, y_true, y_pred) -> float:
        """Head errors plus (labelled) words with a wrong head or label."""
        a, b = np.asarray(y_true), np.asarray(y_pred)
        wrong_head = a[0] != b[0]
        loss = int(np.count_nonzero(wrong_head))
        if self.labelled:
            loss += int(np.count_nonzero(wrong_head | (a[1] != b[1])))
        return float(loss)

    def argmax(self, x, w, y_true=None, *, random_state=None) -> DecodeResult:
        """Best projective tree of one sentence; loss-augmented when ``y_true`` is given."""
        Y = None if y_true is None else [y_true]
        return self.argmax_results(self._one(x), w, Y)[0]

    def argmax_results(self, X, w, Y=None, *, random_state=None) -> list[DecodeResult]:
        X = as_dep_corpus(X)
        S, B, sq = self._scores(X, w, Y)
        out = []
        for i in range(len(X)):
            n1 = int(X.offsets[i + 1] - X.offsets[i])
            Si, Bi = S[sq[i]:sq[i + 1]], B[sq[i]:sq[i + 1]]
            heads = _EMPTY if n1 == 1 else np.asarray(
                eisner(Si.reshape(n1, n1), single_root=self.single_root).structure, np.int64)
            # the score of the returned tree under the (folded, augmented) arc scores
            score, labels = tree_label_score(Si, Bi, heads)
            score = float(score)
            y = np.empty((3, n1 - 1), np.int64)
            y[0] = heads
            y[1] = labels if self.labelled else -1
            y[2] = X.scored[X.offsets[i] + 1:X.offsets[i + 1]]
            if Y is not None:
                y, score = self._gold_if_better(X[i], w, np.asarray(Y[i]), y, score)
            out.append(DecodeResult(y, score))
        return out

    def _gold_if_better(self, x, w, gold, y, score):
        """The gold tree when it is not projective and beats the loss-augmented argmax."""
        if is_projective(np.ascontiguousarray(gold[0], dtype=np.int64)):
            return y, score
        gold_score = self._phi(x, gold).dot(w)
        if gold_score > score + 1e-9 * max(1.0, abs(score)):
            g = np.array(y)
            g[0] = gold[0]
            g[1] = gold[1] if self.labelled else -1
            return g, gold_score
        return y, score

    def argmax_batch(self, X, w, Y=None, *, random_state=None) -> list:
        return [r.structure for r in self.argmax_results(X, w, Y)]

    def kbest(self, x, w, k: int) -> list[tuple[np.ndarray, tuple, float]]:
        """The ``k`` best projective trees of one sentence, best first.

        Each is ``(heads, deprels, score)``: heads (n,) int64 (0 = root), label strings chosen
        per arc as in the 1-best decoder ('_' when unlabelled), and the model score w . Phi.
        """
        if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
            raise ConfigError(f"k must be a positive integer, got {k!r}")
        S, B = self.arc_scores(x, w, with_labels=True)
        n = S.shape[0] - 1
        if n == 0:
            return [(_EMPTY.copy(), (), 0.0)]
        trees = eisner_kbest(S, int(k), single_root=self.single_root)
        out = []
        for heads, score in zip(np.asarray(trees.heads), np.asarray(trees.scores)):
            heads = np.asarray(heads, dtype=np.int64)
            ids = B[heads, np.arange(1, n + 1)]
            deprels = tuple(self.labels[i] for i in ids) if self.labelled else ("_",) * n
            out.append((heads, deprels, float(score)))
        return out


_FIELDS = ("hash_bits", "label_hash_bits", "labels", "labelled", "single_root", "bins",
           "input_kind", "n_columns")


def _rebuild(cls, fields: dict) -> DependencyStructure:
    """A pickled structure (keyword arguments: ``__reduce__`` passes positional ones)."""
    return cls(**fields)
