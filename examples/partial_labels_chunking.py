"""Training a chunker when only some tags are known
=================================================

Annotation is often partial: a dictionary tags some words, an annotator marks only the
chunks they are sure of. Give such a tag as ``None`` (``_`` in a CoNLL file) and the
learner treats it as a latent variable: the CRF sums over every tag it could have, the
structural SVM fills it in with its current weights and retrains until its objective stops
falling. The script hides half the tags of 1,000 CoNLL-2000 training sentences at random and
compares, on 1,000 held-out sentences:

* the CRF and the structural SVM with the hidden tags as latent,
* the CRF with every hidden tag filled in as ``O`` (what one does without partial labels),
* the CRF with every tag known.

Reads CoNLL-2000 from ``$LATENTSTRUCT_DATA`` (default ``../shared/data``); about two minutes.
The full-size runs (50 % and 80 % hidden, UPOS on EWT) are ``experiments/partial_labels.py``.
"""
import warnings

import matplotlib.pyplot as plt
import numpy as np

from latentstruct import Chunker
from latentstruct.data.paths import dataset_path
from latentstruct.data.readers import read_conll2000
from latentstruct.exceptions import ConvergenceWarning

sentences = read_conll2000(dataset_path("conll2000", "train.txt"))
train, held_out = sentences[:1000], sentences[-1000:]
X = [list(zip(s.words, s.pos)) for s in train]
y = [list(s.tags) for s in train]
X_test, y_test = [list(zip(s.words, s.pos)) for s in held_out], [list(s.tags) for s in held_out]

rng = np.random.default_rng(0)
hidden = [rng.random(len(tags)) < 0.5 for tags in y]
partial = [[None if h else t for t, h in zip(tags, gone)] for tags, gone in zip(y, hidden)]
as_o = [["O" if h else t for t, h in zip(tags, gone)] for tags, gone in zip(y, hidden)]
print(f"{sum(map(np.sum, hidden))} of {sum(map(len, y))} training tags hidden")

runs = [("CRF, hidden tags latent", "crf", partial), ("SSVM, hidden tags latent", "ssvm", partial),
        ("CRF, hidden tags as O", "crf", as_o), ("CRF, every tag known", "crf", y)]
scores = []
for name, learner, labels in runs:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # each learner at its defaults
        chunker = Chunker(learner=learner).fit(X, labels)
    scores.append(chunker.score(X_test, y_test))
    print(f"{name:<26} held-out F1 {scores[-1]:.4f}")

fig, ax = plt.subplots(figsize=(7, 3.2), layout="constrained")
ax.barh([name for name, _, _ in runs][::-1], scores[::-1], color="tab:blue")
for k, s in enumerate(scores[::-1]):
    ax.annotate(f"{s:.3f}", (s, k), xytext=(3, 0), textcoords="offset points", va="center")
ax.set_xlim(min(scores) - 0.05, 1.0)
ax.set_xlabel("held-out chunk F1 (1,000 CoNLL-2000 sentences)")
ax.set_title("half of the training tags hidden")
plt.show()
