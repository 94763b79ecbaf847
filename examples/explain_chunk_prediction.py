"""Why did the chunker say that? n-best lists, allowed labels and an exact explanation
=====================================================================================

A linear-chain CRF chunker (``Chunker(learner="crf")``) trained on 2,000 CoNLL-2000
sentences explains one held-out sentence:

* ``predict_nbest(X, k)``: the k best tag sequences with their probabilities, from an
  exact k-best Viterbi over the well-formed IOB2 sequences;
* ``predict(X, allowed=...)``: the best sequence once a token's tag is forced;
* ``explain_prediction(x)``: every weight's share of the prediction's score (the shares
  add up to it), the margin to the runner-up, and each token's marginal probability.

The figure shows each token's share of the score, split into its word and context features
and the transition into it, with the probability the model gives the predicted tag.
Reads CoNLL-2000 from ``$LATENTSTRUCT_DATA`` (default ``../shared/data``); about 20 s.
"""
import warnings

import matplotlib.pyplot as plt
import numpy as np

from latentstruct import Chunker
from latentstruct.exceptions import ConvergenceWarning
from latentstruct.data.paths import dataset_path
from latentstruct.data.readers import read_conll2000

sentences = read_conll2000(dataset_path("conll2000", "train.txt"))
train, held_out = sentences[:2000], sentences[-1000:]
X = [list(zip(s.words, s.pos)) for s in train]
y = [list(s.tags) for s in train]
with warnings.catch_warnings():
    warnings.simplefilter("ignore", ConvergenceWarning)  # CRFsuite's 100 L-BFGS iterations
    chunker = Chunker(learner="crf").fit(X, y)

x = list(zip(held_out[3].words, held_out[3].pos))
print(" ".join(held_out[3].words))
for tags, score, p in chunker.predict_nbest([x], k=3)[0]:
    print(f"p={p:.3f}  score={score:7.3f}  {' '.join(tags)}")

# force the second token's tag: the best sequence that keeps it (and stays well-formed)
forced = chunker.predict([x], allowed=[[None, "B-VP"] + [None] * (len(x) - 2)])[0]
print("with token 1 forced to B-VP:", " ".join(forced))

e = chunker.explain_prediction(x)
print(e.__str__(top=3))
total = sum(c.value for c in e.contributions)
print(f"the {len(e.contributions)} contributions sum to {total:.9f}; the score is {e.score:.9f}")

# each token's share: its state features, and the start/transition/end parts at it
state = np.zeros(len(x))
chain = np.zeros(len(x))
for c in e.contributions:
    (state if c.kind == "state" else chain)[c.position] += c.value
fig, ax = plt.subplots(figsize=(9, 4), layout="constrained")
positions = np.arange(len(x))
ax.bar(positions, state, label="word and context features")
ax.bar(positions, chain, bottom=np.where(chain > 0, state, 0), label="transition, start, end")
for t, tag in enumerate(e.labels):
    ax.annotate(f"{tag}\np={e.marginals[t][tag]:.2f}", (t, max(state[t] + chain[t], state[t])),
                ha="center", va="bottom", fontsize=7)
ax.set_xticks(positions, [w for w, _ in x], rotation=45, ha="right")
ax.set_ylabel("share of the score")
ax.set_title(f"score {e.score:.2f}, margin {e.margin:.2f} to the runner-up")
ax.legend(loc="lower right")
plt.show()
