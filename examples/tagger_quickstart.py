"""Part-of-speech tagging from plain Python lists: ``latentstruct.Tagger`` in a dozen lines.
=========================================================================================

X is a list of token lists and y a list of tag lists, as ``sklearn_crfsuite.CRF`` takes
them (per-token feature dicts work too). Reads UD English EWT from ``$LATENTSTRUCT_DATA``
(default ``../shared/data``). Run: ``python examples/tagger_quickstart.py`` (~20 s; prints 0.950 and
``[["DET", "NOUN", "VERB", "ADP", "DET", "NOUN", "PUNCT"]]``).
"""
from latentstruct import Tagger, load
from latentstruct.data.paths import dataset_path
from latentstruct.data.readers import read_conllu

sentences = read_conllu(dataset_path("ud_english_ewt", "en_ewt-ud-train.conllu"))[:6000]
X = [list(s.words) for s in sentences]  # [["Al", "-", "Zaman", ":", ...], ...]
y = [list(s.upos) for s in sentences]  # [["PROPN", "PUNCT", "PROPN", ...], ...]
tagger = Tagger().fit(X[:5000], y[:5000])
print(f"UPOS accuracy on 1,000 held-out sentences: {tagger.score(X[5000:], y[5000:]):.3f}")
tagger.save("pos.npz")  # the command line's model format: `latentstruct predict --model pos.npz`
print(load("pos.npz").predict([["The", "cat", "sat", "on", "the", "mat", "."]]))
