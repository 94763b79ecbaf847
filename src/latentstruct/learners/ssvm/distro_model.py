"""DISTRO's parameters and the arithmetic on them: part scores, structure scores, the hinge
and the subgradients in W and in A (Srikumar & Manning 2014, Eqs. 3–6).

The model of a label-factored task with label matrix A (d × L, column l = a_l):

* emission part t with label l:      φ_tᵀ W_E a_l            (W_E: F × d, held as scale·V)
* transition part with labels (a,b): a_aᵀ W_T a_b            (W_T: d × d)
* start / end part with label l:     s_vᵀ a_l / e_vᵀ a_l     (s_v, e_v: d)

so the decoders see unary = R W_E A, transition = Aᵀ W_T A, start = Aᵀ s_v, end = Aᵀ e_v.
A task without transitions (multiclass) has only the emission block.  Nothing here knows a
task: rows, offsets and labels come from the task's ``label_factored_batch``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ...solvers.label_matrix import scatter_rows

__all__ = ["DistroParams", "ChainLabels"]

# rescale V into W_E = scale * V when the lazy L2 shrink factor gets this small
_RESCALE_BELOW = 1e-9


@dataclass
class ChainLabels:
    """Per-example counts of a labelling that the transition, start and end parts see."""

    trans: np.ndarray  # (L, L) transition counts summed over the examples
    first: np.ndarray  # (L,) counts of first labels
    last: np.ndarray   # (L,) counts of last labels

    @staticmethod
    def of(z: np.ndarray, offsets: np.ndarray, n_labels: int) -> "ChainLabels":
        """Counts of labelling ``z`` (concatenated, −1 = unknown) of the examples in ``offsets``."""
        L = n_labels
        trans = np.zeros((L, L))
        first = np.zeros(L)
        last = np.zeros(L)
        n = z.shape[0]
        if n > 1:
            same = np.ones(n - 1, dtype=bool)
            inner = offsets[1:-1]
            inner = inner[(inner > 0) & (inner < n)]
            same[inner - 1] = False
            a, b = z[:-1][same], z[1:][same]
            ok = (a >= 0) & (b >= 0)
            np.add.at(trans, (a[ok], b[ok]), 1.0)
        nonempty = offsets[1:] > offsets[:-1]
        f = z[offsets[:-1][nonempty]]
        la = z[offsets[1:][nonempty] - 1]
        np.add.at(first, f[f >= 0], 1.0)
        np.add.at(last, la[la >= 0], 1.0)
        return ChainLabels(trans, first, last)


@dataclass
class DistroParams:
    """W_E = scale · V (F × d), W_T (d × d), s_v, e_v (d,) — None without transitions — and A."""

    V: np.ndarray
    scale: float
    W_T: np.ndarray | None
    start: np.ndarray | None
    end: np.ndarray | None
    A: np.ndarray
    #: mini-batch steps taken so far by w-steps and A-steps (the step-size schedules' t)
    t_w: int = 0
    t_a: int = 0

    @classmethod
    def zeros(cls, n_attributes: int, A: np.ndarray, transitions: bool) -> "DistroParams":
        d = A.shape[0]
        z = (lambda *shape: np.zeros(shape)) if transitions else (lambda *shape: None)
        return cls(np.zeros((n_attributes, d)), 1.0, z(d, d), z(d), z(d), A.copy())

    @property
    def has_transitions(self) -> bool:
        return self.W_T is not None

    def copy(self) -> "DistroParams":
        c = lambda a: None if a is None else a.copy()  # noqa: E731
        return DistroParams(self.V.copy(), self.scale, c(self.W_T), c(self.start), c(self.end),
                            self.A.copy(), self.t_w, self.t_a)

    def assign(self, other: "DistroParams") -> None:
        """Take every field of ``other`` (in place, so holders of this object see it)."""
        for name in ("V", "scale", "W_T", "start", "end", "A", "t_w", "t_a"):
            setattr(self, name, getattr(other, name))

    def get_state(self) -> tuple[dict, dict]:
        """``(meta, arrays)`` holding every field exactly (for checkpoints)."""
        arrays = {k: getattr(self, k) for k in ("V", "W_T", "start", "end", "A")
                  if getattr(self, k) is not None}
        return {"scale": float(self.scale), "t_w": int(self.t_w), "t_a": int(self.t_a)},\
            {k: v.copy() for k, v in arrays.items()}

    @classmethod
    def from_state(cls, meta: dict, arrays: dict) -> "DistroParams":
        """The parameters :meth:`get_state` described."""
        get = lambda k: arrays[k].copy() if k in arrays else None  # noqa: E731
        return cls(get("V"), float(meta["scale"]), get("W_T"), get("start"), get("end"),
                   get("A"), int(meta["t_w"]), int(meta["t_a"]))

    def emission(self) -> np.ndarray:
        return self.scale * self.V

    def weight_sq_norm(self) -> float:
        """||w||² over W_E, W_T, s_v and e_v (A is not in w)."""
        total = self.scale ** 2 * float(np.vdot(self.V, self.V))
        for a in (self.W_T, self.start, self.end):
            if a is not None:
                total += float(np.vdot(a, a))
        return total

    # --- scores ------------------------------------------------------------------------
    def token_embeddings(self, rows: sp.csr_matrix) -> np.ndarray:
        """U = R W_E (n × d)."""
        return self.scale * np.asarray(rows @ self.V)

    def label_scores(self):
        """(transition (L, L), start (L,), end (L,)) part scores, or Nones without transitions."""
        if not self.has_transitions:
            return None, None, None
        A = self.A
        return A.T @ self.W_T @ A, self.start @ A, self.end @ A

    def structure_scores(self, unary, offsets, z, chain_scores) -> np.ndarray:
        """Score of labelling ``z`` (concatenated; −1 scores nothing) of every example."""
        n_ex = offsets.shape[0] - 1
        lengths = np.diff(offsets)
        ex = np.repeat(np.arange(n_ex), lengths)
        known = z >= 0
        em = np.zeros(z.shape[0])
        em[known] = unary[np.flatnonzero(known), z[known]]
        out = np.bincount(ex, weights=em, minlength=n_ex)
        trans, start, end = chain_scores
        if trans is not None and z.shape[0]:
            n = z.shape[0]
            if n > 1:
                same = ex[:-1] == ex[1:]
                a, b = z[:-1], z[1:]
                ok = same & (a >= 0) & (b >= 0)
                out += np.bincount(ex[:-1][ok], weights=trans[a[ok], b[ok]], minlength=n_ex)
            nonempty = lengths > 0
            idx = np.flatnonzero(nonempty)
            f = z[offsets[:-1][nonempty]]
            la = z[offsets[1:][nonempty] - 1]
            out[idx[f >= 0]] += start[f[f >= 0]]
            out[idx[la >= 0]] += end[la[la >= 0]]
        return out

    # --- steps -------------------------------------------------------------------------
    def shrink(self, factor: float) -> None:
        """w <- factor · w (lazily for W_E)."""
        self.scale *= factor
        for a in (self.W_T, self.start, self.end):
            if a is not None:
                a *= factor
        if self.scale < _RESCALE_BELOW:
            self.V *= self.scale
            self.scale = 1.0

    def weight_step(self, rows, offsets, y_hat, y, coef: float) -> None:
        """w -= coef · (Φ_A(x, ŷ) − Φ_A(x, y)) summed over the examples in ``rows``/``offsets``."""
        A = self.A
        wrong = np.flatnonzero(y_hat != y)
        if wrong.size:
            # G_t = a_ŷt − a_yt on wrong tokens, 0 elsewhere; scattering every row is cheaper
            # than cutting the wrong rows out of the CSR matrix
            G = np.zeros((rows.shape[0], A.shape[0]))
            G[wrong] = A[:, y_hat[wrong]].T
            gold = y[wrong]
            ok = gold >= 0
            G[wrong[ok]] -= A[:, gold[ok]].T
            scatter_rows(self.V, rows.indptr.astype(np.int64), rows.indices.astype(np.int64),
                         rows.data, G, -coef / self.scale)
        if self.has_transitions:
            L = A.shape[1]
            p, g = ChainLabels.of(y_hat, offsets, L), ChainLabels.of(y, offsets, L)
            self.W_T -= coef * (A @ (p.trans - g.trans) @ A.T)
            self.start -= coef * (A @ (p.first - g.first))
            self.end -= coef * (A @ (p.last - g.last))

    def label_gradient(self, U, offsets, y_hat, y) -> np.ndarray:
        """∂/∂A of Σ (score(ŷ) − score(y)) over the examples (d × L), W fixed.

        Emissions give U_tᵀ on column ŷ_t and −U_tᵀ on y_t; transitions (counts C of ŷ minus
        those of y) give W_T A Cᵀ + W_Tᵀ A C; start / end give s_v (s_ŷ − s_y)ᵀ and likewise.
        """
        A = self.A
        d, L = A.shape
        GT = np.zeros((L, d))
        wrong = np.flatnonzero(y_hat != y)
        if wrong.size:
            np.add.at(GT, y_hat[wrong], U[wrong])
            gold = y[wrong]
            ok = gold >= 0
            np.subtract.at(GT, gold[ok], U[wrong[ok]])
        G = GT.T
        if self.has_transitions:
            p, g = ChainLabels.of(y_hat, offsets, L), ChainLabels.of(y, offsets, L)
            C = p.trans - g.trans
            G = G + self.W_T @ A @ C.T + self.W_T.T @ A @ C
            G = G + np.outer(self.start, p.first - g.first) + np.outer(self.end, p.last - g.last)
        return G

    # --- packing (model files) -----------------------------------------------------------
    def pack(self) -> np.ndarray:
        parts = [self.emission().ravel()]
        if self.has_transitions:
            parts += [self.W_T.ravel(), self.start, self.end]
        parts.append(self.A.ravel())
        return np.concatenate(parts)

    @staticmethod
    def packed_size(n_attributes: int, d: int, n_labels: int, transitions: bool) -> int:
        return n_attributes * d + (d * d + 2 * d if transitions else 0) + d * n_labels

    @classmethod
    def unpack(cls, coef: np.ndarray, n_attributes: int, d: int, n_labels: int,
               transitions: bool) -> "DistroParams":
        k = n_attributes * d
        V = coef[:k].reshape(n_attributes, d).copy()
        W_T = start = end = None
        if transitions:
            W_T = coef[k : k + d * d].reshape(d, d).copy()
            k += d * d
            start, end = coef[k : k + d].copy(), coef[k + d : k + 2 * d].copy()
            k += 2 * d
        A = coef[k:].reshape(d, n_labels).copy()
        return cls(V, 1.0, W_T, start, end, A)
