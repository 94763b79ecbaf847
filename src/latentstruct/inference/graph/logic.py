"""``ad3+``'s hard logic constraints as linear rows over node-state indicators.

A constraint is a tuple ``(operator, nodes, states, negated)``:

* ``nodes``: global node indices (nodes are numbered type after type in a typed graph);
* ``states``: the state each node is tested for, one per node or one for all;
* ``negated``: whether each literal is negated, one bool per node or one for all.

Literal ``k`` is ``l_k = [y_{nodes[k]} == states[k]]``, or ``1 - l_k`` when negated.  The
operators (AD3's logic factors) and their rows, with ``n`` literals:

==============  ======================================  ===============================
operator        meaning                                 rows
==============  ======================================  ===============================
``XOR``         exactly one literal is true             ``sum l = 1``
``OR``          at least one is true                    ``sum l >= 1``
``ATMOSTONE``   at most one is true                     ``sum l <= 1``
``IMPLY``       the first n-1 together imply the last   ``sum_{k<n} (1 - l_k) + l_n >= 1``
``XOROUT``      at most one of the others is true,      ``sum_{k<n} l_k = l_n``
                and the last iff one is (AD3's)
``OROUT``       the last is the OR of the others        ``l_k <= l_n``, ``l_n <= sum_{k<n} l_k``
``ANDOUT``      the last is the AND of the others       ``l_n <= l_k``, ``l_n >= sum_{k<n} l_k - (n - 2)``
==============  ======================================  ===============================

On 0/1 indicators these rows hold exactly when the logic does; in the LP relaxation they
cut the local polytope, and the ILP is exact.
"""

from __future__ import annotations

import numpy as np

from latentstruct.exceptions import InputError
from latentstruct.inference.global_constraints import GlobalConstraints

__all__ = ["OPERATORS", "constraint_rows"]

OPERATORS = ("XOR", "OR", "ATMOSTONE", "IMPLY", "XOROUT", "OROUT", "ANDOUT")


def _per_node(value, n: int, name: str, where: str, kind) -> list:
    if isinstance(value, (list, tuple, np.ndarray)):
        values = list(value)
        if len(values) != n:
            raise InputError(f"{where}: {name} has {len(values)} entries for {n} nodes; expected "
                             f"one per node or a single value for all")
    else:
        values = [value] * n
    for k, v in enumerate(values):
        if kind is bool and not isinstance(v, (bool, np.bool_, int, np.integer)):
            raise InputError(f"{where}: {name}[{k}] = {v!r}; expected a bool")
        if kind is int and (isinstance(v, (bool, np.bool_))
                            or not isinstance(v, (int, np.integer))):
            raise InputError(f"{where}: {name}[{k}] = {v!r}; expected an integer state")
    return [kind(v) for v in values]


def constraint_rows(constraints, node_states, node_var_start):
    """Rows ``lower <= sum coef * z <= upper`` for the constraints, over the node variables.

    ``node_states[i]`` is node i's number of states, ``node_var_start[i]`` the index of its
    first indicator variable.  Returns ``(rows, cols, coefs, lower, upper)``: COO entries and
    row bounds (``rows`` numbered from 0).  Bad constraints are an InputError naming
    ``constraints[k]``.
    """
    rows, cols, coefs, lower, upper = [], [], [], [], []
    if isinstance(constraints, GlobalConstraints):
        return _global_rows(constraints, node_states, node_var_start)
    if constraints is None:
        constraints = []
    if not isinstance(constraints, (list, tuple)):
        raise InputError("constraints must be a list of (operator, nodes, states, negated) "
                         f"tuples; got {type(constraints).__name__}")
    n_nodes = len(node_states)

    def add(terms, const, lo, hi):
        # terms: (variable, coefficient) pairs; const moves to the bounds
        r = len(lower)
        for var, c in terms:
            rows.append(r)
            cols.append(var)
            coefs.append(c)
        lower.append(lo - const)
        upper.append(hi - const)

    for k, item in enumerate(constraints):
        where = f"constraints[{k}]"
        if not isinstance(item, (list, tuple)) or len(item) != 4:
            raise InputError(f"{where} = {item!r}; expected a tuple (operator, nodes, states, "
                             "negated)")
        op, nodes, states, negated = item
        op = str(op).upper()
        if op not in OPERATORS:
            raise InputError(f"{where}: unknown operator {item[0]!r}; expected one of "
                             f"{', '.join(OPERATORS)}")
        nodes = np.asarray(nodes).ravel()
        if nodes.size == 0 or nodes.dtype.kind not in "iu":
            raise InputError(f"{where}: nodes must be a non-empty list of node indices; got "
                             f"{item[1]!r}")
        bad = (nodes < 0) | (nodes >= n_nodes)
        if bad.any():
            j = int(np.flatnonzero(bad)[0])
            raise InputError(f"{where}: nodes[{j}] = {nodes[j]} is out of range for {n_nodes} "
                             "nodes")
        n = int(nodes.size)
        if op in ("IMPLY", "XOROUT", "OROUT", "ANDOUT") and n < 2:
            raise InputError(f"{where}: {op} needs at least 2 nodes; got {n}")
        states = _per_node(states, n, "states", where, int)
        negated = _per_node(negated, n, "negated", where, bool)
        lits = []  # each literal as (variable, sign, constant): l = constant + sign * z
        for j in range(n):
            node, s = int(nodes[j]), states[j]
            if not 0 <= s < node_states[node]:
                raise InputError(f"{where}: states[{j}] = {s} is out of range for node {node} "
                                 f"with {node_states[node]} states")
            var = int(node_var_start[node] + s)
            lits.append((var, -1.0, 1.0) if negated[j] else (var, 1.0, 0.0))

        def linear(selected, weight=1.0):
            terms = [(v, weight * sign) for v, sign, _ in selected]
            return terms, weight * sum(c for _, _, c in selected)

        inf = np.inf
        if op in ("XOR", "OR", "ATMOSTONE"):
            terms, const = linear(lits)
            lo, hi = {"XOR": (1, 1), "OR": (1, inf), "ATMOSTONE": (-inf, 1)}[op]
            add(terms, const, lo, hi)
            continue
        head, last = lits[:-1], lits[-1]
        if op == "IMPLY":
            terms, const = linear(head, -1.0)
            t2, c2 = linear([last])
            add(terms + t2, const + len(head) + c2, 1, inf)
        elif op == "XOROUT":
            terms, const = linear(head)
            t2, c2 = linear([last], -1.0)
            add(terms + t2, const + c2, 0, 0)
        elif op == "OROUT":
            for lit in head:
                t1, c1 = linear([lit])
                t2, c2 = linear([last], -1.0)
                add(t1 + t2, c1 + c2, -inf, 0)
            terms, const = linear(head, -1.0)
            t2, c2 = linear([last])
            add(terms + t2, const + c2, -inf, 0)
        else:  # ANDOUT
            for lit in head:
                t1, c1 = linear([lit], -1.0)
                t2, c2 = linear([last])
                add(t1 + t2, c1 + c2, -inf, 0)
            terms, const = linear(head, -1.0)
            t2, c2 = linear([last])
            add(terms + t2, const + c2, -(len(head) - 1), inf)
    return (np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64),
            np.asarray(coefs, dtype=np.float64), np.asarray(lower, dtype=np.float64),
            np.asarray(upper, dtype=np.float64))


def _global_rows(constraints: GlobalConstraints, node_states, node_var_start) -> tuple:
    """The rows of label-level global constraints (counts, if-then) over the node
    indicators of a graph whose nodes all have ``constraints.n_labels`` states."""
    states = np.asarray(node_states)
    if states.size and np.any(states != constraints.n_labels):
        raise InputError(f"global constraints over {constraints.n_labels} labels need every "
                         f"node to have that many states; got {sorted(set(states.tolist()))}")
    starts = np.asarray(node_var_start, dtype=np.int64)
    found, lower, upper = constraints.rows(int(states.size), constraints.n_labels,
                                           lambda i, label: int(starts[i] + label), None)
    rows = [r for r, terms in enumerate(found) for _ in terms]
    cols = [var for terms in found for var, _ in terms]
    coefs = [c for terms in found for _, c in terms]
    return (np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64),
            np.asarray(coefs, dtype=np.float64), np.asarray(lower, dtype=np.float64),
            np.asarray(upper, dtype=np.float64))
