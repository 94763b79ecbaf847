"""
Record linkage: your own structure in 60 lines
===============================================

Two lists of customer records name the same people with typos and missing values: link each
record on the left to at most one on the right. The input of an example is the pair features
of every (left, right) pair, an array of shape ``(n_left, n_right, d)``; the structure is the
matching, ``a[i]`` = the right record of left record ``i`` or -1.

The structure is one small class (no task, no base class): ``n_features``, an exact
``argmax`` (a maximum-weight bipartite matching, Hamming-loss-augmented when training asks),
its ``joint_feature`` and its ``loss``. The structural SVM learns the matchings from gold
ones. Adding ``latent_argmax``, ``latent_feature`` and a heuristic matching (LCLR's start,
and the two-stage baseline) lets LCLR learn the yes/no variant (*do these two lists share a
person?*) from the answers alone, the matching left hidden.
"""

import numpy as np

from latentstruct.data.sparse import SparseVector
from latentstruct.inference.loss import alignment_hamming_augment
from latentstruct.inference.matching import bipartite_matching
from latentstruct.inference.result import DecodeResult
from latentstruct.learners import LCLR, StructuredSVM, TwoStage


class Linkage:
    """x: pair features (n_left, n_right, d); a: right record of each left one, or -1."""

    def __init__(self, d):
        self.n_features = d + 1  # the pair features' weights, then the yes/no bias

    def joint_feature(self, x, a):
        i = np.flatnonzero(a >= 0)
        return SparseVector(np.arange(self.n_features), np.append(x[i, a[i]].sum(0), 0.0))

    def argmax(self, x, w, y_true=None, *, random_state=None):
        scores = x @ w[:-1]
        if y_true is None:
            return bipartite_matching(scores)
        aug = alignment_hamming_augment(scores, y_true)  # + Hamming loss, still a matching
        best = bipartite_matching(aug.scores)
        return DecodeResult(best.structure, best.score + aug.constant, best.status)

    def loss(self, a, b):  # pairs in one matching only: a wrong link counts 2
        return float(np.sum(a != b) + np.sum((a != b) & (a >= 0) & (b >= 0)))

    def latent_argmax(self, x, w, *, random_state=None):  # f(x) = max_a w.Phi(x, a) + bias
        best = bipartite_matching(x @ w[:-1])
        return DecodeResult(best.structure, best.score + w[-1], best.status)

    def latent_feature(self, x, a):
        phi = self.joint_feature(x, a)
        return SparseVector(phi.indices, np.append(phi.values[:-1], 1.0))

    def heuristic_weights(self):  # link when the fields differ by less than 1 in all
        return np.append(np.ones(self.n_features - 1), 0.0)


def lists(rng, n=6, fields=4, shared=4):
    """Right records, and left ones: noisy copies of ``shared`` of them, then strangers."""
    right = rng.normal(size=(n, fields))
    who = rng.permutation(n)[:shared]
    left = np.vstack([right[who] + 0.3 * rng.normal(size=(shared, fields)),
                      rng.normal(size=(n - shared, fields))])
    a = np.full(n, -1)
    a[:shared] = who
    x = np.concatenate([np.ones((n, n, 1)), -np.abs(left[:, None] - right[None])], axis=2)
    return x, a


rng = np.random.default_rng(0)
train, test = [lists(rng, shared=int(rng.integers(0, 5))) for _ in range(200)], \
              [lists(rng, shared=int(rng.integers(0, 5))) for _ in range(200)]
structure = Linkage(d=5)

ssvm = StructuredSVM(structure, C=1.0).fit([x for x, _ in train], [a for _, a in train])
links = np.concatenate(ssvm.predict([x for x, _ in test]))
gold = np.concatenate([a for _, a in test])
print(f"structural SVM: {np.mean(links == gold):.3f} of the left records linked right "
      f"(linking none: {np.mean(gold == -1):.3f})")

pairs = [lists(rng, shared=int(rng.choice([0, 2]))) for _ in range(400)]  # half share 2
X, answer = [x for x, _ in pairs], np.array([1 if (a >= 0).any() else -1 for _, a in pairs])
# the pair features are sums over linked pairs, strongly correlated: the inner solver needs
# more epochs than its default to reach its tolerance
for learner in (TwoStage(structure, C=1.0), LCLR(structure, C=1.0, dcd_max_iter=20000)):
    right = np.mean(learner.fit(X[:200], answer[:200]).predict(X[200:]) == answer[200:])
    print(f"{type(learner).__name__} from yes/no alone: {right:.3f} of the test pairs of lists "
          f"answered right (always yes: {np.mean(answer[200:] == 1):.3f})")
