"""PyStruct's letters example, through ``latentstruct.pystruct``
===============================================================

PyStruct's ``plot_letters`` example on ``latentstruct.pystruct`` (see
:doc:`/guide/pystruct`): its imports change, and the words, of different lengths, are kept
as lists where PyStruct's example made them a ragged ``np.array`` (which numpy no longer
builds).  Each handwritten word (Taskar, Guestrin & Koller's OCR data) is a sequence of
letters, each letter a 16 x 8 binary image read as 128 features.  A ``ChainCRF`` trained by
``FrankWolfeSSVM(C=0.1, max_iter=11)`` on fold 1 (704 words) is tested on the nine other
folds (6,173 words, all of them), against scikit-learn's ``LinearSVC(dual=False, C=0.1)``,
which sees the letters one by one.  The chain's transition weights let a letter's
neighbours vote, which helps most where a letter's image alone is ambiguous.

The figures are PyStruct's: test words the chain reads right and the letter classifier
does not, each letter's image under the two readings (LinearSVC / ChainCRF, red where
LinearSVC is wrong), and the chain's learned transition weights.

Reads ``ocr_letters/letters.npz`` from ``$LATENTSTRUCT_DATA`` (default ``../shared/data``).
Run it (about 25 s)::

    python examples/pystruct_letters.py
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.svm import LinearSVC

from latentstruct.pystruct.datasets import load_letters
from latentstruct.pystruct.learners import FrankWolfeSSVM
from latentstruct.pystruct.models import ChainCRF

abc = "abcdefghijklmnopqrstuvwxyz"

letters = load_letters()
X, y, folds = letters["data"], letters["labels"], letters["folds"]
# the words have different lengths: keep them as lists (numpy no longer builds a ragged
# array from np.array(X), which PyStruct's example called)
X_train = [x for x, f in zip(X, folds) if f == 1]
y_train = [w for w, f in zip(y, folds) if f == 1]
X_test = [x for x, f in zip(X, folds) if f != 1]
y_test = [w for w, f in zip(y, folds) if f != 1]
print(f"train: {len(X_train)} words ({sum(map(len, y_train)):,} letters), "
      f"test: {len(X_test):,} words ({sum(map(len, y_test)):,} letters)")

# %%
# The baseline: a linear SVM on single letters, blind to the neighbours.
svm = LinearSVC(dual=False, C=0.1)
svm.fit(np.vstack(X_train), np.hstack(y_train))
print(f"letter accuracy, LinearSVC on single letters: "
      f"{svm.score(np.vstack(X_test), np.hstack(y_test)):.4f}")

# %%
# The chain: PyStruct's two lines.  ``ChainCRF()`` learns 26 x 128 unary weights and a
# 26 x 26 transition matrix; Frank-Wolfe runs 11 passes over the training words.
model = ChainCRF()
# (random_state fixes the order in which Frank-Wolfe visits the words, so that this page
# prints the same figures at every build; PyStruct's example leaves it unset)
ssvm = FrankWolfeSSVM(model=model, C=0.1, max_iter=11, random_state=0)
ssvm.fit(X_train, y_train)
print(f"letter accuracy, ChainCRF + FrankWolfeSSVM:   {ssvm.score(X_test, y_test):.4f}")

# %%
# Words the chain reads right and the letter classifier does not (the first few of the
# test folds), letter by letter, and the learned transitions.
y_pred = ssvm.predict(X_test)
y_svm = [svm.predict(x) for x in X_test]
words_test = [w for w, f in zip(letters["words"], folds) if f != 1]
# the test folds hold many writers' copies of each word: show six different words
shown, seen = [], set()
for i in range(len(X_test)):
    fixed = np.all(y_pred[i] == y_test[i]) and np.any(y_svm[i] != y_test[i])
    if fixed and words_test[i] not in seen and len(shown) < 6:
        shown.append(i)
        seen.add(words_test[i])
width = max(len(X_test[i]) for i in shown)

fig, axes = plt.subplots(len(shown), width, figsize=(1.0 * width + 1, 1.5 * len(shown)),
                         gridspec_kw={"hspace": 0.7})
for row, i in zip(axes, shown):
    for k, ax in enumerate(row):
        ax.set_xticks(())
        ax.set_yticks(())
        if k >= len(X_test[i]):
            ax.set_frame_on(False)
            continue
        ax.imshow(X_test[i][k].reshape(16, 8), cmap=plt.cm.Greys)
        # red where the letter classifier is wrong
        wrong = y_svm[i][k] != y_test[i][k]
        ax.set_title(f"{abc[y_svm[i][k]]} / {abc[y_pred[i][k]]}", fontsize=9,
                     color="tab:red" if wrong else "black")
    # the data leaves out each word's first (capital) letter
    row[0].set_ylabel(f"-{words_test[i]}", fontsize=9)
fig.suptitle("LinearSVC / ChainCRF reading of each letter")

# the pairwise weights: the last 26 x 26 entries of w (ChainCRF's transitions are directed)
transitions = ssvm.w[-26 * 26:].reshape(26, 26)
fig, ax = plt.subplots(figsize=(5.5, 5))
image = ax.matshow(transitions, cmap="RdBu_r", vmin=-np.abs(transitions).max(),
                   vmax=np.abs(transitions).max())
ax.set_xticks(range(26))
ax.set_xticklabels(abc, fontsize=7)
ax.set_yticks(range(26))
ax.set_yticklabels(abc, fontsize=7)
ax.set_xlabel("next letter")
ax.set_ylabel("letter")
fig.colorbar(image, ax=ax, shrink=0.8)
ax.set_title("learned transition weights")
plt.show()
