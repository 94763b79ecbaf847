"""A latent problem of your own, from scratch: which sentences make a review a defect report?
==========================================================================================

The problem (multiple-instance document labelling).  A product review is a list of
sentences; it is labelled +1 when it reports a defect ("The hinge cracked after a month.")
and -1 otherwise.  The label belongs to the review, but the evidence is one or two of its
sentences, hidden among praise, complaints that are not defects ("Shipping was terribly
slow.") and failures of some other device ("The screen of my old phone died, so I got
this.").  Which sentences support the label is never annotated: it is the latent structure
h, any set of 1..k sentences (k = 2), and a review scores f(x) = max_h w . Phi(x, h).

Two systems learn w from the labels alone:

* two-stage ("alignment + learning"): a fixed heuristic first picks one sentence -- the one
  with the most words from a seed lexicon of part names and complaint words, a plausible
  but imperfect choice -- and an SVM then learns from the sentences it picked;
* LCLR (Chang et al. 2010) chooses the supporting sentences and w jointly, so the choice
  improves as w does.

What you learn here:

1. how to define a task: a ``LatentBinaryTask`` subclass with the capabilities
   latent-binary and heuristic (``SupportingSentenceTask``, about 80 lines) -- features,
   the constraint ``1 <= |h| <= k``, an exact decoder of its own (and why it is exact), the
   heuristic as a weight vector, and the parts every task writes (fit, featurize,
   encode_targets, n_features, get_state/from_state, make_dataset);
2. how to check it before training: ``latentstruct.testing.check_task`` compares the
   decoder with a brute-force enumeration of every legal structure and round-trips the
   task through a model file and to a process worker;
3. how to train ``LCLR`` and ``TwoStage`` on it, compare them, and read the sentences each
   one chose;
4. how ``register_task`` turns it into a scikit-learn estimator on raw data
   (``latentstruct.Estimator``) with model files.

docs/subclassing.md lists what each capability asks of a task and what it unlocks.

Run it (about 3 seconds; no data files, no network; seeded, so the output is always the
same)::

    python examples/custom_latent_task.py

Expected output ("defect sentence found": of the held-out reviews that contain a defect
report, the fraction where a system's chosen sentences include one; 3% of the labels are
flipped on purpose, so no system reaches 1.0 accuracy)::

    300 training and 300 held-out reviews, 149 features
    check_task passed 13 checks on 30 reviews x 5 weight vectors (largest error 1.8e-15):
      capabilities-implemented, fitted, n-features, heuristic-weights, feature-indices,
      latent-argmax-status, latent-argmax-score, latent-argmax-maximum, heuristic-decode,
      latent-batch, state-json, state-round-trip, pickle-round-trip

    system        accuracy   defect sentence found
    LCLR             0.977                   1.000
    two-stage        0.773                   0.547

    Sentences chosen in held-out reviews (L = LCLR, H = two-stage, T = true defect):

    review 0: label +1, LCLR f(x) = +0.98
      ...  The screen of my old phone failed completely, so I got this.
      ...  The speaker feels solid.
      ...  I stopped using my tablet since I got this.
      .HT  The keyboard cracked within a week.
      L.T  The power button stopped working after two weeks.
      ...  Setup was quick and easy.

    review 2: label +1, LCLR f(x) = +0.62
      ...  The design is sleek.
      ...  The manual is not helpful at all.
      ...  I stopped using my tablet since I got this.
      .H.  The charging port of my old phone cracked, so I got this.
      L.T  The charger cracked after the first update.
      ...  Great value for the money.
      L.T  The keyboard started rattling after the first update.

    review 4: label +1, LCLR f(x) = +0.97
      ...  Setup was quick and easy.
      .H.  The delivery driver left it in the rain, terrible service.
      ...  I bought this for my son.
      L.T  The charger started rattling on the third day.

    review 1: label -1, LCLR f(x) = -1.00
      LH.  Shipping was terribly slow.
      ...  The design is sleek.
      ...  I use it every day for work.

    latentstruct.Estimator on the raw reviews: accuracy 0.977, after save and load 0.977
"""

from __future__ import annotations

import itertools
import os
import re
import tempfile
import textwrap

import numpy as np

import latentstruct
from latentstruct.data.sparse import SparseVector
from latentstruct.exceptions import check_is_fitted
from latentstruct.inference.result import DecodeResult
from latentstruct.learners import LCLR, TwoStage
from latentstruct.tasks.base import Dataset, LatentBinaryTask, register_task
from latentstruct.tasks.contracts import HEURISTIC, LATENT_BINARY
from latentstruct.tasks.validation import raw_binary_labels, raw_error, raw_examples, raw_string
from latentstruct.testing import check_task

# ----------------------------------------------------------------------------------------
# 1. Data: product reviews; the label asks "does this review report a defect?"
# ----------------------------------------------------------------------------------------
PARTS = ["screen", "battery", "charger", "power button", "speaker", "hinge", "charging port",
         "headphone jack", "keyboard", "camera"]
# a defect report: the sentence that makes a review positive (the hidden structure)
DEFECTS = ["stopped working", "died", "cracked", "broke", "came loose", "started rattling",
           "fell apart", "gave out", "snapped", "failed completely", "no longer works",
           "does not work anymore"]
WHEN = ["after two weeks", "after a month", "on the third day", "within a week",
        "after the first update", "the day after the warranty ended"]
# distractors: praise, complaints that are not defects, and neutral background
PRAISE = ["The {part} is great.", "I really like the {part}.", "The {part} feels solid.",
          "Setup was quick and easy.", "Great value for the money.", "The design is sleek.",
          "It works perfectly for video calls.", "The {part} is better than I expected."]
COMPLAINTS = ["Shipping was terribly slow.", "Customer service never answered my emails.",
              "The box arrived damaged but nothing inside was broken.",
              "I was disappointed by the price.", "The manual is not helpful at all.",
              "Not happy with the color options.", "The {part} is not as good as advertised.",
              "The delivery driver left it in the rain, terrible service.",
              "No problem with the {part}, but the case is ugly."]
NEUTRAL = ["I bought this for my son.", "I use it every day for work.",
           "We ordered it during a sale.", "This replaced my old laptop, which finally died.",
           "My wife picked the blue one.", "I mostly use it on the train.",
           "My son dropped it twice and nothing broke.", "It has never let me down so far.",
           "I stopped using my tablet since I got this."]
# the two-stage system's seed lexicon: a defect report names a part and a failure
LEXICON = ("screen", "battery", "charger", "button", "speaker", "hinge", "port", "jack",
           "keyboard", "camera", "not", "never", "no", "terrible", "terribly", "disappointed",
           "problem", "broke", "broken", "damaged", "slow", "stopped", "died", "cracked", "badly")


def make_reviews(n, rng, noise=0.03):
    """``n`` reviews (lists of sentences), their labels (+1: reports a defect; a fraction
    ``noise`` flipped, as annotation mistakes) and the indices of their defect sentences."""

    def pick(pool):  # a random entry of pool, any {part} in it filled in
        return pool[rng.integers(len(pool))].format(part=PARTS[rng.integers(len(PARTS))])

    docs, labels, supports = [], [], []
    for i in range(n):
        label = 1 if i % 2 == 0 else -1
        sentences = [pick(NEUTRAL)] + [pick(PRAISE) for _ in range(rng.integers(1, 3))]
        sentences += [pick(COMPLAINTS) for _ in range(rng.binomial(2, 0.3))]
        if rng.random() < 0.25:  # a failure, but of another device: not a defect report
            sentences.append(f"The {pick(PARTS)} of my old phone {pick(DEFECTS)}, so I got this.")
        n_defects = 1 + int(rng.integers(2)) if label > 0 else 0
        defects = [f"The {pick(PARTS)} {pick(DEFECTS)} {pick(WHEN)}." for _ in range(n_defects)]
        order = rng.permutation(len(sentences) + n_defects)  # sentence k goes to order[k]
        doc = [""] * len(order)
        for slot, sentence in zip(order, sentences + defects):
            doc[slot] = sentence
        docs.append(doc)
        labels.append(-label if rng.random() < noise else label)
        supports.append(sorted(int(k) for k in order[len(sentences):]))
    return docs, labels, supports


def tokens(sentence):
    return re.findall(r"[a-z']+", sentence.lower())


# ----------------------------------------------------------------------------------------
# 2. The task: features, constraints and the exact decoder
# ----------------------------------------------------------------------------------------
class SupportingSentenceTask(LatentBinaryTask):
    """A document (a list of sentences) is positive when some sentences support the label.

    x: a featurised document, an array (n_sentences, n_features): each sentence's word
       counts, then a constant 1 (a per-sentence bias).  h: the supporting sentences, a
       sorted int array of 1..max_sentences row indices.  Phi(x, h) = the sum of h's rows.

    Parameters
    ----------
    max_sentences : int, default 2
        Most sentences a supporting set may hold (k).
    lexicon : tuple of str
        The heuristic's seed words: it keeps the sentence with most of them.
    """

    name = "supporting-sentences"
    capabilities = frozenset({LATENT_BINARY, HEURISTIC})

    def __init__(self, max_sentences=2, lexicon=LEXICON):
        self.max_sentences = max_sentences
        self.lexicon = lexicon

    def make_dataset(self, X, y=None):
        docs, labels = raw_examples(X, y, example="document (a list of sentences)")
        for i, doc in enumerate(docs):
            if isinstance(doc, str) or not doc:
                raise raw_error("a document must be a non-empty list of sentences", i)
            for j, sentence in enumerate(doc):
                raw_string(sentence, i, "a sentence", at=f"[{j}]")
        targets = [None] * len(docs) if labels is None else raw_binary_labels(labels)
        return Dataset(docs, targets)

    def fit(self, dataset):
        words = sorted({t for doc in dataset.records for s in doc for t in tokens(s)})
        self.vocabulary_ = {t: i for i, t in enumerate(words)}
        self.fitted_ = True
        return self

    @property
    def n_features(self):
        return len(self.vocabulary_) + 1  # the words, then the bias

    def featurize(self, dataset):
        check_is_fitted(self)
        X = []
        for doc in dataset.records:
            rows = np.zeros((len(doc), self.n_features))
            for i, sentence in enumerate(doc):
                for t in tokens(sentence):
                    if t in self.vocabulary_:  # words unseen in training are dropped
                        rows[i, self.vocabulary_[t]] += 1.0
            rows[:, -1] = 1.0
            X.append(rows)
        return X

    def encode_targets(self, targets):
        return np.asarray(targets, dtype=np.int64)

    def latent_feature(self, x, h):
        return SparseVector.from_dense(x[np.asarray(h, dtype=np.int64)].sum(axis=0))

    def latent_argmax(self, x, w, *, random_state=None):
        # Exact: the score sum_{i in h} s_i is additive over sentences and the only
        # constraint is 1 <= |h| <= k (k = max_sentences).  For a fixed size m the best h
        # is the m top-scoring sentences (swapping a chosen one for a better unchosen one
        # never lowers the sum); growing the best m-set to the best (m+1)-set adds the
        # (m+1)-th score, which helps exactly when it is > 0, and sorted scores are positive
        # on a prefix.  So: the top sentence (|h| >= 1 forces it), then the next ones while
        # they score > 0, up to k.  Ties go to the earlier sentence (random_state is unused:
        # the task does not declare random-ties).
        scores = x @ w
        order = np.argsort(-scores, kind="stable")
        n = 1 + int(np.sum(scores[order[1:self.max_sentences]] > 0))
        h = np.sort(order[:n])
        return DecodeResult(h, float(scores[h].sum()))

    def heuristic_weights(self):
        # the sentence with the most lexicon words (the first such): +1 per lexicon word,
        # and a bias so low that no second sentence ever scores above zero
        w = np.zeros(self.n_features)
        w[[self.vocabulary_[t] for t in self.lexicon if t in self.vocabulary_]] = 1.0
        w[-1] = -1000.0
        return w

    def get_state(self):
        check_is_fitted(self)
        return {"vocabulary": sorted(self.vocabulary_, key=self.vocabulary_.get)}, {}

    @classmethod
    def from_state(cls, params, state, arrays):
        task = cls(**params)
        task.vocabulary_ = {t: i for i, t in enumerate(state["vocabulary"])}
        task.fitted_ = True
        return task


# ----------------------------------------------------------------------------------------
# 3. Check the task against brute force, train, compare, and look at the latent choices
# ----------------------------------------------------------------------------------------
def all_supports(x, k=2):
    """Every legal structure of document x: each set of 1..k sentences."""
    for size in range(1, min(k, len(x)) + 1):
        for h in itertools.combinations(range(len(x)), size):
            yield np.array(h, dtype=np.int64)


def main():
    rng = np.random.default_rng(0)
    docs, labels, supports = make_reviews(600, rng)
    n_train = 300
    task = SupportingSentenceTask(max_sentences=2)
    train = task.make_dataset(docs[:n_train], labels[:n_train])
    test = task.make_dataset(docs[n_train:], labels[n_train:])
    task.fit(train)
    X_train, y_train = task.featurize(train), task.encode_targets(train.targets)
    X_test, y_test = task.featurize(test), task.encode_targets(test.targets)
    truth = supports[n_train:]
    print(f"{len(X_train)} training and {len(X_test)} held-out reviews, "
          f"{task.n_features} features")

    # Before training: the decoder must be exact and agree with the feature map, and the
    # task must survive a model file.  check_task compares latent_argmax with the maximum
    # over every legal structure (all_supports) under random weights, among other checks.
    report = check_task(task, task.make_dataset(docs[:30], labels[:30]),
                        enumerate=lambda x: all_supports(x, task.max_sentences))
    print(f"check_task passed {len(report.checks)} checks on {report.n_examples} reviews "
          f"x {report.n_weights} weight vectors (largest error {report.max_abs_error:.1e}):")
    print(textwrap.fill(", ".join(report.checks), 88, initial_indent="  ",
                        subsequent_indent="  "))

    lclr = LCLR(task).fit(X_train, y_train)
    two_stage = TwoStage(task).fit(X_train, y_train)

    with_defect = [i for i in range(len(X_test)) if truth[i]]
    print(f"\n{'system':<12}{'accuracy':>10}{'defect sentence found':>24}")
    for name, model in (("LCLR", lclr), ("two-stage", two_stage)):
        chosen = model.latent_argmax([X_test[i] for i in with_defect])
        found = np.mean([bool(set(h) & set(truth[i])) for i, h in zip(with_defect, chosen)])
        print(f"{name:<12}{model.score(X_test, y_test):>10.3f}{found:>24.3f}")

    print("\nSentences chosen in held-out reviews (L = LCLR, H = two-stage, T = true defect):")
    for i in with_defect[:3] + [i for i in range(len(X_test)) if y_test[i] < 0][:1]:
        picks = [set(lclr.latent_argmax([X_test[i]])[0]),
                 set(two_stage.latent_argmax([X_test[i]])[0]), set(truth[i])]
        f = lclr.decision_function([X_test[i]])[0]
        print(f"\nreview {i}: label {y_test[i]:+d}, LCLR f(x) = {f:+.2f}")
        for j, sentence in enumerate(test.records[i]):
            marks = "".join(c if j in s else "." for c, s in zip("LHT", picks))
            print(f"  {marks}  {sentence}")

    # Registered by name, the task plugs into the rest of the library: a scikit-learn
    # estimator on raw documents (make_dataset) whose model file round-trips through
    # get_state/from_state.  (The positive class is the larger label, here +1.)
    register_task(SupportingSentenceTask)
    est = latentstruct.Estimator(task="supporting-sentences", learner="lclr")
    est.fit(docs[:n_train], labels[:n_train])
    with tempfile.TemporaryDirectory() as folder:
        est.save(os.path.join(folder, "reviews.model"))
        loaded = latentstruct.load(os.path.join(folder, "reviews.model"))
    raw_test = (docs[n_train:], labels[n_train:])
    print(f"\nlatentstruct.Estimator on the raw reviews: accuracy {est.score(*raw_test):.3f}, "
          f"after save and load {loaded.score(*raw_test):.3f}")


if __name__ == "__main__":
    main()
