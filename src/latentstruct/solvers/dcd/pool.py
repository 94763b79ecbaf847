"""The persistent working set of grouped DCD: :class:`ConstraintPool` stores the constraints
``w . d_k >= b_k - xi_{g(k)}`` in growable CSR arrays next to their dual variables, so that
a solve after adding constraints starts from the previous alpha (LCLR footnote 2)."""

from __future__ import annotations

import mmap
import sys
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from latentstruct.data.sparse import SparseRows, SparseVector, coalesce_arrays
from latentstruct.solvers.dcd.kernels import (
    accumulate_w,
    all_float32,
    all_int8,
    csr_margins,
    csr_rows_scaled,
    is_coalesced,
    primal_dual_objectives,
)
from latentstruct.solvers.dcd.validation import (
    as_weight_vector,
    check_C,
    check_arguments,
)


_UINT32_MAX = np.iinfo(np.uint32).max
#: storage arrays of at least this many bytes live in maps that grow in place (Linux's
#: ``mremap``, through ``mmap.resize``; a private anonymous map: new pages read as zero,
#: and nothing is shared with another process); smaller ones, and every array elsewhere,
#: are numpy's and are copied when they grow
_IN_PLACE_MIN_BYTES = 1 << 20
_IN_PLACE = sys.platform.startswith("linux") and hasattr(mmap, "MAP_ANONYMOUS")
_PRIVATE_ANONYMOUS = getattr(mmap, "MAP_PRIVATE", 0) | getattr(mmap, "MAP_ANONYMOUS", 0)
#: transparent huge pages for maps from this size up (numpy's threshold for its arrays)
_HUGEPAGE = getattr(mmap, "MADV_HUGEPAGE", None)
_HUGEPAGE_MIN_BYTES = 1 << 22
#: the dtypes the pool stores the values of the d_k in, narrowest first: each holds every
#: value the one before it does, and the pool takes the first that holds all of its values
#: exactly (the kernels widen each value to float64 before they use it)
VALUE_DTYPES = (np.dtype(np.int8), np.dtype(np.float32), np.dtype(np.float64))


class Constraint(NamedTuple):
    """One stored constraint ``w . d >= b - xi_group``."""

    d: SparseVector
    b: float
    group: int


class ConstraintPool:
    """Persistent working set of grouped constraints ``w . d_k >= b_k - xi_{g(k)}``.

    The constraints live in growable CSR arrays (capacity doubles when full) next to their dual
    variables ``alpha``; the pool therefore carries alpha from one :func:`solve_grouped_dcd` call
    to the next, and a re-solve after :meth:`add` is warm-started.  The values of the ``d_k``
    are stored in the narrowest of ``VALUE_DTYPES`` (int8, float32, float64) that holds
    every one of them exactly, widened when a value needs it: the structural SVM's Phi
    differences of count features are small integers, so its pool takes 5 bytes per nonzero
    (a uint32 feature id and an int8) instead of 12.  The kernels widen each value to
    float64 before they use it, so the stored width never changes a result.  Constraint ids are stable
    (0, 1, 2, ... in order of addition) and are never reused; :meth:`deactivate` switches one off
    (its alpha becomes 0 and it is ignored by later solves and objectives).

    Parameters
    ----------
    n_features : int
        Dimension of w (feature indices must lie in ``[0, n_features)``).
    n_groups : int
        Number of slack groups (normally the number of examples); groups are ``0..n_groups-1``.
    """

    def __init__(self, n_features: int, n_groups: int):
        check_arguments("ConstraintPool", n_features=n_features, n_groups=n_groups)
        n_features, n_groups = int(n_features), int(n_groups)
        self._n_features = n_features
        self._n_groups = n_groups
        # unsigned feature ids: the kernels then skip numba's negative-index wraparound code
        self._index_dtype = np.uint32 if n_features <= _UINT32_MAX else np.uint64
        self._n = 0
        self._nnz = 0
        cap, nnz_cap = 16, 256
        self._indptr = np.zeros(cap + 1, dtype=np.int64)
        self._indices = np.zeros(nnz_cap, dtype=self._index_dtype)
        self._data = np.zeros(nnz_cap, dtype=VALUE_DTYPES[0])  # widened when a value needs it
        self._b = np.zeros(cap, dtype=np.float64)
        self._group = np.zeros(cap, dtype=np.int64)
        self._alpha = np.zeros(cap, dtype=np.float64)
        self._active = np.zeros(cap, dtype=np.bool_)
        self._sqnorm = np.zeros(cap, dtype=np.float64)
        self._n_active = 0
        # dedupe: the key of every constraint (a hash of its group, b, coalesced indices and
        # values, _dedupe_key), whether it was registered (add_csr rows are not), and
        # key -> id of each active registered constraint (a list of ids where keys collide)
        self._key = np.zeros(cap, dtype=np.int64)
        self._keyed = np.zeros(cap, dtype=np.bool_)
        self._lookup: dict[int, int | list[int]] = {}

    # ---------------------------------------------------------------- storage helpers
    def _reserve(self, n_more: int, nnz_more: int, *, exact: bool = False) -> None:
        """Room for ``n_more`` constraints and ``nnz_more`` nonzeros: capacity doubles, or
        with ``exact`` grows to what is needed, on numpy's heap (a bulk insertion into an
        empty pool that may never grow: numpy's allocator reuses freed memory, where a
        fresh anonymous map takes a page fault per 4 KB written, a ninth of a binary
        20 Newsgroups fit)."""
        need = self._n + n_more
        cap = self._b.shape[0]
        if need > cap:
            new_cap = need if exact else max(need, 2 * cap)
            for name in ("_indptr", "_b", "_group", "_alpha", "_active", "_sqnorm", "_key",
                         "_keyed"):
                self._grow(name, new_cap + (name == "_indptr"), heap=exact)
        need_nnz = self._nnz + nnz_more
        nnz_cap = self._data.shape[0]
        if need_nnz > nnz_cap:
            new_cap = need_nnz if exact else max(need_nnz, 2 * nnz_cap)
            self._grow("_indices", new_cap, heap=exact)
            self._grow("_data", new_cap, heap=exact)

    def _grow(self, name: str, new_len: int, *, heap: bool = False) -> None:
        """Lengthen the storage array ``self.<name>`` to ``new_len`` entries (those past
        its old length not initialised: each insertion writes every field of its
        constraints, and the memory of spare capacity is not touched until it is used).
        An array in an anonymous map (:func:`_empty`) grows in place, its pages remapped
        rather than copied, so the old and the new array are never both resident (a
        doubling of the 7.4 million nonzeros of a CoNLL-2000 fit would otherwise hold both
        copies of the 29 MB index array at once); it is copied where the map cannot grow
        (a view of the array alive elsewhere, or no ``mremap``), and with ``heap`` into a
        numpy array (:meth:`_reserve`'s ``exact``)."""
        arr = getattr(self, name)
        old_len, dtype = arr.shape[0], arr.dtype
        base = arr.base
        if not heap and isinstance(base, memoryview) and isinstance(base.obj, mmap.mmap):
            mm = base.obj
            setattr(self, name, None)
            del arr, base  # the map can only grow with no array exported from it
            try:
                mm.resize(new_len * dtype.itemsize)
            except (BufferError, OSError, SystemError, ValueError):
                arr = np.frombuffer(mm, dtype=dtype)  # as it was: copy it below
            else:
                setattr(self, name, np.frombuffer(mm, dtype=dtype))
                return
        out = np.empty(new_len, dtype=dtype) if heap else _empty(new_len, dtype)
        out[:old_len] = arr
        setattr(self, name, out)

    def _widen_for(self, val: np.ndarray) -> None:
        """Widen the value storage to the next of ``VALUE_DTYPES`` that holds every value
        of ``val`` (float64) exactly, when the present one does not.  Every insertion calls
        it before :meth:`_reserve`, then writes its values: the growth allocates the wide
        array once, where widening after it would fill a full-size narrow array and copy
        it (on a fresh pool of 20 Newsgroups documents that copy took an eighth of the
        whole binary fit).  Values are checked once, here."""
        dtype = self._data.dtype
        if not _holds(dtype, val):
            wider = VALUE_DTYPES[VALUE_DTYPES.index(dtype) + 1:]
            dtype = next(d for d in wider if _holds(d, val))
            wide = _empty(self._data.shape[0], dtype)
            wide[: self._nnz] = self._data[: self._nnz]
            self._data = wide

    def _values(self, lo, hi) -> np.ndarray:
        """The stored values ``lo:hi`` as float64 (a copy)."""
        return self._data[lo:hi].astype(np.float64)

    def _view(self):
        """Views (length n_constraints / nnz) of the storage, in kernel argument order."""
        n, nnz = self._n, self._nnz
        return (
            self._indptr[: n + 1],
            self._indices[:nnz],
            self._data[:nnz],
            self._b[:n],
            self._group[:n],
            self._sqnorm[:n],
            self._alpha[:n],
            self._active[:n],
        )

    def _check_group(self, group) -> int:
        if isinstance(group, (bool, np.bool_)) or not isinstance(group, (int, np.integer)):
            raise TypeError(f"group must be an int in [0, {self._n_groups}), got {group!r}")
        g = int(group)
        if not 0 <= g < self._n_groups:
            raise ValueError(
                f"group {g} is out of range: this pool has n_groups={self._n_groups}, so groups "
                f"are 0..{self._n_groups - 1}; create the pool with more groups"
            )
        return g

    def _checked_groups(self, groups: np.ndarray) -> np.ndarray:
        """A bulk insertion's group ids as int64, each in 0..n_groups-1."""
        if groups.size and not np.issubdtype(groups.dtype, np.integer):
            raise TypeError(f"groups must be integers, got dtype {groups.dtype}")
        groups = groups.astype(np.int64, copy=False)
        if groups.size and (groups.min() < 0 or groups.max() >= self._n_groups):
            raise ValueError(
                f"groups must lie in [0, {self._n_groups}), got min {groups.min()}, "
                f"max {groups.max()}"
            )
        return groups

    def _check_id(self, k) -> int:
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)):
            raise TypeError(f"constraint id must be an int, got {k!r}")
        k = int(k)
        if not 0 <= k < self._n:
            raise IndexError(
                f"constraint id {k} out of range: the pool holds {self._n} constraints"
            )
        return k

    def _check_indices(self, idx: np.ndarray, what: str) -> None:
        if idx.size and (idx.min() < 0 or idx.max() >= self._n_features):
            raise ValueError(
                f"{what} has feature indices outside [0, {self._n_features}) "
                f"(min {idx.min()}, max {idx.max()}); create the pool with a larger n_features"
            )

    # ---------------------------------------------------------------- adding / removing
    def add(self, group: int, d: SparseVector, b: float) -> int:
        """Add the constraint ``w . d >= b - xi_group`` with alpha = 0 and return its id.

        ``d`` is coalesced (repeated indices summed, zeros dropped) before it is stored.  If an
        identical active constraint (same group, same coalesced d, same b) is already in the
        pool, nothing is added and the existing id is returned.
        """
        g = self._check_group(group)
        if not isinstance(d, SparseVector):
            raise TypeError(f"d must be a SparseVector, got {type(d).__name__}")
        b = float(b)
        if not np.isfinite(b):
            raise ValueError(f"b must be a finite float, got {b}")
        idx, val = d.indices, d.values
        if not is_coalesced(idx, val):  # tasks often hand over coalesced vectors already
            idx, val = coalesce_arrays(idx, val)
        if not np.all(np.isfinite(val)):
            raise ValueError("d has non-finite values (nan or inf); features must be finite")
        self._check_indices(idx, "d")
        idx = idx.astype(self._index_dtype, copy=False)
        val = val.astype(np.float64, copy=False)
        key = _dedupe_key(g, b, idx, val)
        for k in self._registered(key):
            if self._stores(k, g, b, idx, val):
                return k
        m = idx.shape[0]
        self._widen_for(val)
        self._reserve(1, m)
        k, lo = self._n, self._nnz
        self._indices[lo : lo + m] = idx
        self._data[lo : lo + m] = val
        self._indptr[k + 1] = lo + m
        self._b[k] = b
        self._group[k] = g
        self._alpha[k] = 0.0
        self._active[k] = True
        self._sqnorm[k] = float(np.dot(val, val))
        self._n += 1
        self._nnz += m
        self._n_active += 1
        self._register(k, key)
        return k

    def add_rows(self, groups, rows: SparseRows, b) -> np.ndarray:
        """:meth:`add` of every row ``i`` of ``rows`` (``w . rows[i] >= b[i] - xi_{groups[i]}``),
        in order, with :meth:`add`'s checks and de-duplication (against the pool and within
        the batch); returns the ids.  The same pool as a loop of :meth:`add`, at one
        validation and one copy per batch instead of per constraint (the structural SVM
        adds a mini-batch's cutting planes at once)."""
        if not isinstance(rows, SparseRows):
            raise TypeError(f"rows must be a SparseRows, got {type(rows).__name__}")
        m = len(rows)
        groups = np.asarray(groups)
        b = np.asarray(b, dtype=np.float64).reshape(-1)
        if groups.shape != (m,) or b.shape != (m,):
            raise ValueError(f"groups and b must have one entry per row ({m}), got shapes "
                             f"{groups.shape} and {b.shape}")
        if m == 0:
            return np.zeros(0, dtype=np.int64)
        groups = self._checked_groups(groups)
        if not np.all(np.isfinite(b)):
            raise ValueError("b must be finite floats (no nan or inf)")
        indptr, idx, val = rows.indptr, rows.indices, rows.values
        if not all(is_coalesced(idx[indptr[i]:indptr[i + 1]], val[indptr[i]:indptr[i + 1]])
                   for i in range(m)):
            rows = SparseRows.from_vectors(r.coalesce() for r in rows)
            indptr, idx, val = rows.indptr, rows.indices, rows.values
        if not np.all(np.isfinite(val)):
            raise ValueError("d has non-finite values (nan or inf); features must be finite")
        self._check_indices(idx, "d")
        idx = idx.astype(self._index_dtype, copy=False)
        val = val.astype(np.float64, copy=False)
        # De-duplicate in order, as a loop of add would: a row identical to an active
        # constraint, or to an earlier row of this batch, takes that constraint's id.
        ids = np.empty(m, dtype=np.int64)
        new_rows, new_keys, k = [], [], self._n
        for i in range(m):
            lo, hi = indptr[i], indptr[i + 1]
            key = _dedupe_key(int(groups[i]), float(b[i]), idx[lo:hi], val[lo:hi])
            found = self._find(key, i, groups, b, idx, val, indptr, new_rows)
            if found is None:
                ids[i] = k
                self._lookup_add(key, k)
                new_keys.append(key)
                new_rows.append(i)
                k += 1
            else:
                ids[i] = found
        if not new_rows:
            return ids
        new_rows = np.asarray(new_rows, dtype=np.int64)
        sizes = indptr[new_rows + 1] - indptr[new_rows]
        take = np.repeat(indptr[new_rows] - np.r_[0, np.cumsum(sizes)[:-1]], sizes) + \
            np.arange(int(sizes.sum()))
        n_new, nnz = new_rows.size, int(sizes.sum())
        new_val = val[take]
        self._widen_for(new_val)
        self._reserve(n_new, nnz)
        k0, lo = self._n, self._nnz
        self._indices[lo : lo + nnz] = idx[take]
        self._data[lo : lo + nnz] = new_val
        self._indptr[k0 + 1 : k0 + n_new + 1] = lo + np.cumsum(sizes)
        self._b[k0 : k0 + n_new] = b[new_rows]
        self._group[k0 : k0 + n_new] = groups[new_rows]
        self._alpha[k0 : k0 + n_new] = 0.0
        self._active[k0 : k0 + n_new] = True
        self._key[k0 : k0 + n_new] = new_keys
        self._keyed[k0 : k0 + n_new] = True
        ends = np.cumsum(sizes)
        for j in range(n_new):  # as add computes it, to the last bit
            v = new_val[ends[j] - sizes[j] : ends[j]]
            self._sqnorm[k0 + j] = float(np.dot(v, v))
        self._n += n_new
        self._nnz += nnz
        self._n_active += n_new
        return ids

    def _find(self, key, i, groups, b, idx, val, indptr, new_rows):
        """The id of an active constraint equal to row ``i`` of a batch being added, under
        its ``key``: stored in the pool, or row ``new_rows[j]`` of the batch (id n + j);
        None."""
        g, bi = groups[i], b[i]
        d_idx, d_val = idx[indptr[i]:indptr[i + 1]], val[indptr[i]:indptr[i + 1]]
        for k in self._registered(key):
            if k < self._n:
                same = self._stores(k, g, bi, d_idx, d_val)
            else:
                r = new_rows[k - self._n]
                same = (groups[r] == g and b[r] == bi
                        and np.array_equal(idx[indptr[r]:indptr[r + 1]], d_idx)
                        and np.array_equal(val[indptr[r]:indptr[r + 1]], d_val))
            if same:
                return k
        return None

    def _stores(self, k, g, b, idx, val) -> bool:
        """Whether stored constraint k is ``(g, b, idx, val)`` (coalesced)."""
        lo, hi = self._indptr[k], self._indptr[k + 1]
        return bool(self._group[k] == g and self._b[k] == b
                    and np.array_equal(self._indices[lo:hi], idx)
                    and np.array_equal(self._data[lo:hi], val))

    # ---------------------------------------------------------------- the dedupe index
    def _registered(self, key) -> tuple | list:
        """The active registered ids under ``key`` (oldest first)."""
        ids = self._lookup.get(key)
        if ids is None:
            return ()
        return ids if isinstance(ids, list) else (ids,)

    def _lookup_add(self, key, k: int) -> None:
        ids = self._lookup.get(key)
        if ids is None:
            self._lookup[key] = k  # one int per key: the common case holds no list
        elif isinstance(ids, list):
            ids.append(k)
        else:
            self._lookup[key] = [ids, k]

    def _register(self, k: int, key) -> None:
        """Record constraint k's key and enter it into the index (k active)."""
        self._key[k] = key
        self._keyed[k] = True
        self._lookup_add(key, k)

    def add_csr(self, X, b, groups, *, row_scale=None) -> np.ndarray:
        """Add one constraint per row of ``X`` (row i: ``w . X[i] >= b[i] - xi_{groups[i]}``).

        Vectorised bulk insertion for the binary / one-constraint-per-example case.  Rows are
        *not* checked against existing constraints (no dedupe) and are not registered for
        dedupe by later :meth:`add` calls.  Duplicate column entries within a row are summed;
        ``X`` itself is not modified.  ``row_scale`` (one float per row) multiplies row i
        by ``row_scale[i]`` first, in the same pass as the checks (a binary SVM's
        ``d_i = y_i x_i``).  Returns the new ids (int64 array).
        """
        if not sp.issparse(X):
            raise TypeError(f"X must be a scipy.sparse matrix (CSR), got {type(X).__name__}")
        X = X.tocsr()
        if X.dtype != np.float64:
            X = X.astype(np.float64)
        m = X.shape[0]
        if X.shape[1] > self._n_features:
            raise ValueError(
                f"X has {X.shape[1]} columns but the pool has n_features={self._n_features}"
            )
        b = np.asarray(b, dtype=np.float64).reshape(-1)
        groups = np.asarray(groups)
        scale = np.ones(m) if row_scale is None else np.asarray(row_scale, dtype=np.float64)
        if b.shape != (m,) or groups.shape != (m,) or scale.shape != (m,):
            raise ValueError(
                f"b, groups and row_scale must have one entry per row of X ({m}), got shapes "
                f"{b.shape}, {groups.shape} and {scale.shape}"
            )
        if not np.all(np.isfinite(b)):
            raise ValueError("b and X must be finite (no nan or inf)")
        groups = self._checked_groups(groups)
        canonical = X.has_canonical_format
        values, sqnorm, finite, repeats = csr_rows_scaled(X.indptr, X.indices, X.data, scale,
                                                          X.shape[1], not canonical)
        if repeats:  # sum a row's repeated columns (a copy), then scale
            X = X.copy()
            X.sum_duplicates()
            values, sqnorm, finite, _ = csr_rows_scaled(X.indptr, X.indices, X.data, scale,
                                                        X.shape[1], False)
        if not finite:
            raise ValueError("X and row_scale must be finite (no nan or inf), and so must "
                             "their products")
        nnz = X.nnz
        self._widen_for(values)
        self._reserve(m, nnz, exact=self._n == 0)
        k0, lo = self._n, self._nnz
        self._indices[lo : lo + nnz] = X.indices
        self._data[lo : lo + nnz] = values
        self._indptr[k0 + 1 : k0 + m + 1] = lo + X.indptr[1:]
        self._b[k0 : k0 + m] = b
        self._group[k0 : k0 + m] = groups
        self._alpha[k0 : k0 + m] = 0.0
        self._active[k0 : k0 + m] = True
        self._sqnorm[k0 : k0 + m] = sqnorm
        self._n += m
        self._nnz += nnz
        self._n_active += m
        self._keyed[k0 : k0 + m] = False
        return np.arange(k0, k0 + m, dtype=np.int64)

    def deactivate(self, k: int) -> None:
        """Set alpha_k = 0 and exclude constraint k from later solves and objectives.

        Deactivating an inactive constraint does nothing.  A later :meth:`add` of the same
        constraint creates a new id.
        """
        k = self._check_id(k)
        if not self._active[k]:
            return
        self._active[k] = False
        self._alpha[k] = 0.0
        self._n_active -= 1
        if self._keyed[k]:
            key = int(self._key[k])
            ids = self._lookup[key]
            if isinstance(ids, list):
                ids.remove(k)
                if len(ids) == 1:
                    self._lookup[key] = ids[0]
            else:
                del self._lookup[key]

    # ---------------------------------------------------------------- read access
    @property
    def n_features(self) -> int:
        return self._n_features

    @property
    def n_groups(self) -> int:
        return self._n_groups

    @property
    def n_constraints(self) -> int:
        """Number of constraints ever added (active or not); ids are ``0..n_constraints-1``."""
        return self._n

    @property
    def n_active(self) -> int:
        return self._n_active

    @property
    def nnz(self) -> int:
        return self._nnz

    @property
    def alpha(self) -> np.ndarray:
        """Read-only copy of the dual variables of all constraints (0 for inactive ones)."""
        return _readonly(self._alpha[: self._n].copy())

    @property
    def group_of(self) -> np.ndarray:
        """Read-only array: slack group of every constraint (index it with an id)."""
        return _readonly(self._group[: self._n].copy())

    @property
    def b(self) -> np.ndarray:
        """Read-only array: right-hand side b_k of every constraint."""
        return _readonly(self._b[: self._n].copy())

    @property
    def active_mask(self) -> np.ndarray:
        """Read-only boolean array: which constraints are active."""
        return _readonly(self._active[: self._n].copy())

    def is_active(self, k: int) -> bool:
        return bool(self._active[self._check_id(k)])

    def active_ids(self) -> np.ndarray:
        """Ids of the active constraints, ascending."""
        return np.flatnonzero(self._active[: self._n])

    def group_ids(self, g: int) -> np.ndarray:
        """Ids of the active constraints of group g, ascending."""
        g = self._check_group(g)
        n = self._n
        return np.flatnonzero(self._active[:n] & (self._group[:n] == g))

    def constraint(self, k: int) -> Constraint:
        """``(d, b, group)`` of constraint k (d as stored, i.e. coalesced)."""
        k = self._check_id(k)
        lo, hi = self._indptr[k], self._indptr[k + 1]
        d = SparseVector(self._indices[lo:hi].astype(np.int64), self._values(lo, hi))
        return Constraint(d, float(self._b[k]), int(self._group[k]))

    def compute_w(self) -> np.ndarray:
        """w = sum_k alpha_k d_k over the active constraints (fresh float64 array)."""
        w = np.zeros(self._n_features, dtype=np.float64)
        indptr, indices, data, _, _, _, alpha, active = self._view()
        accumulate_w(indptr, indices, data, alpha, active, w)
        return w

    def margins(self, w: np.ndarray) -> np.ndarray:
        """w . d_k for every constraint (active or not), as a float64 array."""
        w = as_weight_vector(w, self._n_features)
        out = np.empty(self._n, dtype=np.float64)
        indptr, indices, data = self._view()[:3]
        csr_margins(indptr, indices, data, w, out)
        return out

    def objectives(self, C, w: np.ndarray | None = None) -> tuple[float, float]:
        """``(primal, dual)`` for the stored alpha (and ``w``, default ``compute_w()``)."""
        Cg = check_C(C, self._n_groups)
        w = self.compute_w() if w is None else as_weight_vector(w, self._n_features)
        indptr, indices, data, b, group, _, alpha, active = self._view()
        p, d = primal_dual_objectives(indptr, indices, data, b, group, active, alpha, w, Cg)
        return float(p), float(d)

    # ---------------------------------------------------------------- checkpoints
    def get_state(self) -> tuple[dict, dict[str, np.ndarray]]:
        """``(meta, arrays)`` from which :meth:`from_state` rebuilds this pool exactly
        (constraints, dual variables, active flags and the dedupe index)."""
        indptr, indices, data, b, group, sqnorm, alpha, active = self._view()
        keyed = self._keyed[: self._n]
        meta = {"n_features": self._n_features, "n_groups": self._n_groups}
        arrays = {"indptr": indptr, "indices": indices, "data": data, "b": b, "group": group,
                  "sqnorm": sqnorm, "alpha": alpha, "active": active, "keyed": keyed}
        return meta, {k: v.copy() for k, v in arrays.items()}

    @classmethod
    def from_state(cls, meta: dict, arrays: dict) -> "ConstraintPool":
        """The pool :meth:`get_state` described."""
        pool = cls(int(meta["n_features"]), int(meta["n_groups"]))
        n = int(arrays["b"].shape[0])
        nnz = int(arrays["data"].shape[0])
        data = np.asarray(arrays["data"], dtype=np.float64)
        pool._widen_for(data)
        pool._reserve(n, nnz)
        pool._indptr[: n + 1] = arrays["indptr"]
        pool._indices[:nnz] = arrays["indices"]
        pool._data[:nnz] = data
        for name in ("b", "group", "sqnorm", "alpha", "active"):
            getattr(pool, f"_{name}")[:n] = arrays[name]
        pool._n, pool._nnz = n, nnz
        pool._n_active = int(np.count_nonzero(arrays["active"]))
        # the dedupe keys hash bytes, and Python's hash of bytes differs between processes:
        # recompute them here rather than store them
        for k in range(n):
            if not arrays["keyed"][k]:
                pool._keyed[k] = False
                continue
            lo, hi = pool._indptr[k], pool._indptr[k + 1]
            key = _dedupe_key(int(pool._group[k]), float(pool._b[k]), pool._indices[lo:hi],
                              pool._values(lo, hi))
            pool._key[k], pool._keyed[k] = key, True
            if pool._active[k]:
                pool._lookup_add(key, k)
        return pool

    def __repr__(self) -> str:
        return (
            f"ConstraintPool(n_features={self._n_features}, n_groups={self._n_groups}, "
            f"n_constraints={self._n}, n_active={self._n_active}, nnz={self._nnz})"
        )


def _holds(dtype: np.dtype, val: np.ndarray) -> bool:
    """Whether every value of the (finite) float64 array ``val`` is a ``dtype`` exactly."""
    if dtype == np.float64 or val.size == 0:
        return True
    return bool(all_int8(val) if dtype == np.int8 else all_float32(val))


def _dedupe_key(group: int, b: float, idx: np.ndarray, val: np.ndarray) -> int:
    """The dedupe index's key of a coalesced constraint: a hash (a Python int, which fits
    int64) of its group, b, indices (in the pool's index dtype) and float64 values.  Keys
    may collide: a match is confirmed on the stored constraint itself."""
    return hash((group, b, idx.tobytes(), val.tobytes()))


def _empty(n: int, dtype: np.dtype) -> np.ndarray:
    """An uninitialised array of ``n`` ``dtype`` entries; from ``_IN_PLACE_MIN_BYTES`` up,
    on Linux, in a private anonymous map of its own, which
    :meth:`ConstraintPool._grow` lengthens in place (``mremap``)."""
    nbytes = n * dtype.itemsize
    if _IN_PLACE and nbytes >= _IN_PLACE_MIN_BYTES:
        try:
            mm = mmap.mmap(-1, nbytes, flags=_PRIVATE_ANONYMOUS)
        except OSError:
            return np.empty(n, dtype=dtype)
        if _HUGEPAGE is not None and nbytes >= _HUGEPAGE_MIN_BYTES:
            try:  # as numpy asks for its own large arrays: fewer page faults on first use
                mm.madvise(_HUGEPAGE)
            except OSError:
                pass
        return np.frombuffer(mm, dtype=dtype)
    return np.empty(n, dtype=dtype)


def _readonly(arr: np.ndarray) -> np.ndarray:
    arr.flags.writeable = False
    return arr
