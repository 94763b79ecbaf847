"""latentstruct models as spaCy pipeline components (issue 56), with real spaCy, no mocks.

A blank English pipeline gets each component by its factory name (the ``spacy_factories``
entry point: nothing of latentstruct is imported to find it) with a small model trained here;
what the component writes is compared, token for token, with the estimator's predictions,
before and after ``nlp.to_disk`` / ``spacy.load``.  Training goes through ``nlp.initialize`` /
``nlp.update`` and, on EWT sentences converted by ``spacy convert``, through ``spacy train``
and ``spacy evaluate``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

try:
    import spacy
    from spacy.tokens import Doc, DocBin, Span
    from spacy.training import Example
except ImportError:  # pragma: no cover - the nlp extra is missing
    if os.environ.get("CI") == "true":
        raise
    pytest.skip("spaCy is not installed (pip install 'latentstruct[nlp]')",
                allow_module_level=True)

from latentstruct import Chunker, DependencyParser, Tagger
from latentstruct.exceptions import ConfigError, ModelFormatError
from latentstruct.tasks.sequence.chunk_metrics import extract_chunks

REPO = Path(__file__).resolve().parents[1]
TAGGER_CFG = REPO / "examples" / "spacy" / "tagger.cfg"

WORDS = [["The", "cat", "sat", "on", "the", "mat", "."],
         ["A", "dog", "ran", "home", "."],
         ["Dogs", "bark", "loudly", "."],
         ["The", "old", "man", "saw", "a", "big", "dog", "."],
         ["She", "runs", "fast", "."],
         ["They", "ate", "the", "red", "apples", "."]]
UPOS = [["DET", "NOUN", "VERB", "ADP", "DET", "NOUN", "PUNCT"],
        ["DET", "NOUN", "VERB", "ADV", "PUNCT"],
        ["NOUN", "VERB", "ADV", "PUNCT"],
        ["DET", "ADJ", "NOUN", "VERB", "DET", "ADJ", "NOUN", "PUNCT"],
        ["PRON", "VERB", "ADV", "PUNCT"],
        ["PRON", "VERB", "DET", "ADJ", "NOUN", "PUNCT"]]
PTB = [["DT", "NN", "VBD", "IN", "DT", "NN", "."],
       ["DT", "NN", "VBD", "RB", "."],
       ["NNS", "VBP", "RB", "."],
       ["DT", "JJ", "NN", "VBD", "DT", "JJ", "NN", "."],
       ["PRP", "VBZ", "RB", "."],
       ["PRP", "VBD", "DT", "JJ", "NNS", "."]]
CHUNKS = [["B-NP", "I-NP", "B-VP", "B-PP", "B-NP", "I-NP", "O"],
          ["B-NP", "I-NP", "B-VP", "B-ADVP", "O"],
          ["B-NP", "B-VP", "B-ADVP", "O"],
          ["B-NP", "I-NP", "I-NP", "B-VP", "B-NP", "I-NP", "I-NP", "O"],
          ["B-NP", "B-VP", "B-ADVP", "O"],
          ["B-NP", "B-VP", "B-NP", "I-NP", "I-NP", "O"]]
HEADS = [[2, 3, 0, 6, 6, 3, 3], [2, 3, 0, 3, 3], [2, 0, 2, 2], [3, 3, 4, 0, 7, 7, 4, 4],
         [2, 0, 2, 2], [2, 0, 5, 5, 2, 2]]
NEW = [["The", "dog", "sat", "on", "a", "mat", "."], ["She", "saw", "the", "cat", "."],
       ["A", "big", "man", "ran", "."]]


def _rels(heads, upos):
    names = {"DET": "det", "ADJ": "amod", "ADV": "advmod", "ADP": "case", "PUNCT": "punct",
             "PRON": "nsubj", "NOUN": "obj"}
    return [(h, "root" if h == 0 else names.get(p, "dep")) for h, p in zip(heads, upos)]


TREES = [_rels(h, p) for h, p in zip(HEADS, UPOS)]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """Small models trained here: their estimators and model files."""
    folder = tmp_path_factory.mktemp("models")
    tagger = Tagger(learner="perceptron").fit(WORDS, UPOS)
    xpos = Tagger(learner="perceptron", tag_column="xpos").fit(WORDS, PTB)
    pairs = [list(zip(w, p)) for w, p in zip(WORDS, PTB)]
    chunker = Chunker(learner="perceptron").fit(pairs, CHUNKS)
    upairs = [list(zip(w, p)) for w, p in zip(WORDS, UPOS)]
    parser = DependencyParser(learner="perceptron").fit(upairs, TREES)
    out = {}
    for name, est in [("pos", tagger), ("xpos", xpos), ("chunk", chunker), ("dep", parser)]:
        path = folder / f"{name}.npz"
        est.save(path)
        out[name] = (est, path)
    return out


def _docs(nlp, sentences, **annotations):
    return [Doc(nlp.vocab, words=w, **{k: v[i] for k, v in annotations.items()})
            for i, w in enumerate(sentences)]


def _tags(docs, attr):
    return [[getattr(t, attr) for t in doc] for doc in docs]


# ------------------------------------------------------------------------------- tagger
def test_tagger_writes_the_estimators_tags_and_survives_to_disk(models, tmp_path):
    est, path = models["pos"]
    nlp = spacy.blank("en")
    component = nlp.add_pipe("latentstruct_tagger", config={"model": str(path)})
    assert type(component).__name__ == "LatentstructTagger"
    sentences = WORDS + NEW
    expected = est.predict(sentences)
    docs = list(nlp.pipe(_docs(nlp, sentences), batch_size=4))
    assert _tags(docs, "pos_") == expected
    assert _tags(docs, "tag_") == [[""] * len(s) for s in sentences]  # pos_ only
    assert component.labels == tuple(est.classes_)

    nlp.to_disk(tmp_path / "pipeline")
    assert sorted(p.name for p in (tmp_path / "pipeline" / "latentstruct_tagger").iterdir()) \
        == ["cfg.json", "model.npz"]
    loaded = spacy.load(tmp_path / "pipeline")
    assert _tags(loaded.pipe(_docs(loaded, sentences)), "pos_") == expected
    # the folder carries the model: the original file is not needed to load it
    moved = tmp_path / "moved.npz"
    path.rename(moved)
    try:
        again = spacy.load(tmp_path / "pipeline")
        assert _tags([again(Doc(again.vocab, words=s)) for s in sentences], "pos_") == expected
    finally:
        moved.rename(path)


def test_tagger_writes_tag_and_round_trips_bytes(models):
    est, path = models["xpos"]
    nlp = spacy.blank("en")
    nlp.add_pipe("latentstruct_tagger", config={"model": str(path), "attr": "tag_"})
    expected = est.predict(NEW)
    assert _tags(nlp.pipe(_docs(nlp, NEW)), "tag_") == expected
    blank = spacy.blank("en")
    copy = blank.add_pipe("latentstruct_tagger", config={"attr": "tag_"})
    copy.from_bytes(nlp.get_pipe("latentstruct_tagger").to_bytes())
    assert _tags(blank.pipe(_docs(blank, NEW)), "tag_") == expected
    assert blank.from_bytes(nlp.to_bytes()) is blank
    assert _tags(blank.pipe(_docs(blank, NEW)), "tag_") == expected


def test_pipe_calls_the_estimator_once_per_batch(models):
    est, path = models["pos"]
    nlp = spacy.blank("en")
    component = nlp.add_pipe("latentstruct_tagger", config={"model": str(path)})
    calls = []
    real = component.estimator_.predict

    def counted(X, **kw):
        calls.append(len(X))
        return real(X, **kw)

    component.estimator_.predict = counted
    sentences = (WORDS + NEW) * 3  # 27 Docs
    docs = list(nlp.pipe(_docs(nlp, sentences), batch_size=10))
    assert calls == [10, 10, 7]
    assert _tags(docs, "pos_") == est.predict(sentences)


def test_a_doc_with_sentences_is_tagged_per_sentence(models):
    est, path = models["pos"]
    nlp = spacy.blank("en")
    nlp.add_pipe("latentstruct_tagger", config={"model": str(path)})
    words = NEW[0] + NEW[1]
    starts = [True] + [False] * (len(NEW[0]) - 1) + [True] + [False] * (len(NEW[1]) - 1)
    doc = nlp(Doc(nlp.vocab, words=words, sent_starts=starts))
    assert [t.pos_ for t in doc] == est.predict(NEW[:1])[0] + est.predict(NEW[1:2])[0]


# ------------------------------------------------------------------------------ chunker
def test_chunker_spans_equal_the_estimators_chunks(models, tmp_path):
    est, path = models["chunk"]
    nlp = spacy.blank("en")
    nlp.add_pipe("latentstruct_chunker", config={"model": str(path)})
    tagged = [list(zip(w, p)) for w, p in zip(WORDS, PTB)]
    expected = [sorted(extract_chunks(tags), key=lambda c: c[1]) for tags in est.predict(tagged)]

    def spans(docs):
        return [[(s.label_, s.start, s.end - 1) for s in doc.spans["chunks"]] for doc in docs]

    docs = list(nlp.pipe(_docs(nlp, WORDS, tags=PTB)))
    assert spans(docs) == expected
    assert all(len(doc.ents) == 0 for doc in docs)  # NP, VP: not entity types
    nlp.to_disk(tmp_path / "chunker")
    loaded = spacy.load(tmp_path / "chunker")
    assert spans(loaded.pipe(_docs(loaded, WORDS, tags=PTB))) == expected


def test_chunker_writes_entities_when_the_labels_are_entity_types(tmp_path):
    words = [["Ann", "met", "Bob", "in", "Paris", "."], ["IBM", "hired", "Ann", "."],
             ["Bob", "left", "Paris", "."]]
    pos = [["NNP", "VBD", "NNP", "IN", "NNP", "."], ["NNP", "VBD", "NNP", "."],
           ["NNP", "VBD", "NNP", "."]]
    ner = [["B-PER", "O", "B-PER", "O", "B-LOC", "O"], ["B-ORG", "O", "B-PER", "O"],
           ["B-PER", "O", "B-LOC", "O"]]
    est = Chunker(learner="perceptron").fit([list(zip(w, p)) for w, p in zip(words, pos)], ner)
    est.save(tmp_path / "ner.npz")
    nlp = spacy.blank("en")
    component = nlp.add_pipe("latentstruct_chunker", config={"model": str(tmp_path / "ner.npz")})
    assert component.chunk_types == ["LOC", "ORG", "PER"]
    docs = list(nlp.pipe(_docs(nlp, words, tags=pos)))
    expected = [sorted(extract_chunks(t), key=lambda c: c[1])
                for t in est.predict([list(zip(w, p)) for w, p in zip(words, pos)])]
    assert [[(e.label_, e.start, e.end - 1) for e in doc.ents] for doc in docs] == expected
    assert [[(s.label_, s.start, s.end - 1) for s in doc.spans["chunks"]] for doc in docs] \
        == expected
    off = spacy.blank("en")
    off.add_pipe("latentstruct_chunker", config={"model": str(tmp_path / "ner.npz"),
                                                  "ents": False})
    assert all(len(d.ents) == 0 for d in off.pipe(_docs(off, words, tags=pos)))


# ------------------------------------------------------------------------------- parser
def test_parser_writes_the_estimators_trees(models, tmp_path):
    est, path = models["dep"]
    nlp = spacy.blank("en")
    nlp.add_pipe("latentstruct_parser", config={"model": str(path)})
    expected = est.predict([list(zip(w, p)) for w, p in zip(WORDS, UPOS)])

    def trees(docs):
        return [[(0 if t.head.i == t.i else t.head.i + 1, t.dep_) for t in doc] for doc in docs]

    docs = list(nlp.pipe(_docs(nlp, WORDS, pos=UPOS)))
    assert trees(docs) == [[(h, r) for h, r in sent] for sent in expected]
    assert all(len(list(doc.sents)) == 1 for doc in docs)
    nlp.to_disk(tmp_path / "parser")
    loaded = spacy.load(tmp_path / "parser")
    assert trees(loaded.pipe(_docs(loaded, WORDS, pos=UPOS))) == trees(docs)


# ---------------------------------------------------------------------- doc.tensor in
@pytest.fixture(scope="module")
def sm_nlp():
    from latentstruct.data.nlp import resolve_pipeline

    try:
        target = resolve_pipeline("en_core_web_sm").target
    except ConfigError as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"spaCy pipeline unavailable: {exc}")
        pytest.skip(f"spaCy pipeline unavailable: {exc}")
    nlp = spacy.load(target, exclude=["tagger", "parser", "ner", "lemmatizer",
                                      "attribute_ruler", "senter"])
    return nlp


def test_tagger_fed_the_pipelines_tensor_matches_the_estimator(sm_nlp, tmp_path):
    from latentstruct.featurizers import SpacyVectors

    vectors = SpacyVectors(cache_dir=tmp_path / "cache")
    X = list(zip(WORDS, vectors.fit_transform(WORDS)))
    est = Tagger(learner="perceptron").fit(X, UPOS)
    est.save(tmp_path / "vec.npz")
    nlp = sm_nlp
    nlp.add_pipe("latentstruct_tagger", name="ls_tagger", config={"model": str(tmp_path / "vec.npz")})
    try:
        assert nlp.get_pipe("ls_tagger").use_tensor is None  # as the model was trained
        expected = est.predict(list(zip(NEW, vectors.transform(NEW))))
        assert _tags(nlp.pipe(_docs(nlp, NEW)), "pos_") == expected
        # without the tok2vec before it there is no tensor: one clear error
        with nlp.select_pipes(disable=["tok2vec"]), pytest.raises(ConfigError,
                                                                  match="tok2vec"):
            nlp(Doc(nlp.vocab, words=NEW[0]))
        with pytest.raises(ConfigError, match="use_tensor = true"):
            spacy.blank("en").add_pipe("latentstruct_tagger", config={
                "model": str(tmp_path / "vec.npz"), "use_tensor": False})
    finally:
        nlp.remove_pipe("ls_tagger")

    # trained from the predicted Docs' tensors (a tok2vec that annotates them)
    trainee = nlp.add_pipe("latentstruct_tagger", name="ls_new",
                           config={"use_tensor": True, "options": {"shuffle": False}})
    try:
        tok2vec = nlp.get_pipe("tok2vec")
        examples = [Example(tok2vec(Doc(nlp.vocab, words=w)), Doc(nlp.vocab, words=w, pos=t))
                    for w, t in zip(WORDS, UPOS)]
        trainee.initialize(lambda: examples, nlp=nlp)
        trainee.update(examples)
        trainee.update(examples)
        classes = sorted({t for s in UPOS for t in s})
        ref = Tagger(learner="perceptron", shuffle=False).begin_partial_fit(X, UPOS,
                                                                          classes=classes)
        ref.partial_fit(X, UPOS).partial_fit(X, UPOS)
        assert ref.task_.attributes_ == trainee.estimator_.task_.attributes_ == "tokens+arrays"
        np.testing.assert_allclose(trainee.estimator_.learner_.coef_, ref.learner_.coef_,
                                   rtol=1e-6, atol=1e-9)
        # Docs without a tensor cannot train it: one clear error
        bare = [Example(Doc(nlp.vocab, words=w), Doc(nlp.vocab, words=w, pos=t))
                for w, t in zip(WORDS, UPOS)]
        with pytest.raises(ConfigError, match="annotating_components"):
            trainee.update(bare)
    finally:
        nlp.remove_pipe("ls_new")


def test_chunker_and_parser_fed_the_pipelines_tensor_match_the_estimators(sm_nlp, tmp_path):
    from latentstruct.featurizers import SpacyVectors

    vectors = SpacyVectors(cache_dir=tmp_path / "cache")
    A = vectors.fit_transform(WORDS)
    chunker = Chunker(learner="perceptron").fit(
        [(list(zip(w, p)), a) for w, p, a in zip(WORDS, PTB, A)], CHUNKS)
    parser = DependencyParser(learner="perceptron").fit(
        [(list(zip(w, p)), a) for w, p, a in zip(WORDS, UPOS, A)], TREES)
    chunker.save(tmp_path / "chunk.npz")
    parser.save(tmp_path / "dep.npz")
    # the pipeline's own tagger sets tag_ and pos_, its tok2vec doc.tensor
    from latentstruct.data.nlp import resolve_pipeline

    nlp = spacy.load(resolve_pipeline("en_core_web_sm").target,
                     exclude=["parser", "ner", "lemmatizer", "senter"])
    nlp.add_pipe("latentstruct_chunker", config={"model": str(tmp_path / "chunk.npz")})
    nlp.add_pipe("latentstruct_parser", config={"model": str(tmp_path / "dep.npz")})
    docs = list(nlp.pipe(_docs(nlp, NEW)))
    B = vectors.transform(NEW)
    tags, upos = _tags(docs, "tag_"), _tags(docs, "pos_")
    chunks = chunker.predict([(list(zip(w, p)), b) for w, p, b in zip(NEW, tags, B)])
    trees = parser.predict([(list(zip(w, p)), b) for w, p, b in zip(NEW, upos, B)])
    assert [[(s.label_, s.start, s.end - 1) for s in d.spans["chunks"]] for d in docs] == \
        [sorted(extract_chunks(c), key=lambda x: x[1]) for c in chunks]
    assert [[(0 if t.head.i == t.i else t.head.i + 1, t.dep_) for t in d] for d in docs] == trees


# ------------------------------------------------------------------------- bad inputs
def test_a_missing_model_file_is_one_clear_error(tmp_path):
    nlp = spacy.blank("en")
    nlp.add_pipe("latentstruct_tagger", config={"model": str(tmp_path / "nope.npz")})
    with pytest.raises(ConfigError) as info:
        nlp("The cat sat .")
    message = str(info.value)
    assert "nope.npz" in message and "does not exist" in message and "latentstruct train" in message


def test_a_model_of_another_task_is_refused_naming_its_component(models):
    _, chunk_path = models["chunk"]
    with pytest.raises(ConfigError) as info:
        spacy.blank("en").add_pipe("latentstruct_tagger", config={"model": str(chunk_path)})
    message = str(info.value)
    assert "Chunker" in message and "latentstruct_chunker" in message and "Tagger" in message


def test_a_file_that_is_no_model_is_refused(tmp_path):
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a model")
    with pytest.raises(ModelFormatError, match="bad.npz"):
        spacy.blank("en").add_pipe("latentstruct_tagger", config={"model": str(bad)})


def test_unknown_attr_and_non_upos_labels_are_refused(models):
    with pytest.raises(ConfigError, match=r"attr must be \"pos_\".*got 'lemma_'"):
        spacy.blank("en").add_pipe("latentstruct_tagger", config={"attr": "lemma_"})
    _, xpos = models["xpos"]
    with pytest.raises(ConfigError, match="attr = \"tag_\""):
        spacy.blank("en").add_pipe("latentstruct_tagger", config={"model": str(xpos)})
    with pytest.raises(ConfigError, match="pos_attr"):
        spacy.blank("en").add_pipe("latentstruct_chunker", config={"pos_attr": "lemma_"})


def test_a_chunker_without_tags_before_it_says_what_to_add(models):
    _, path = models["chunk"]
    nlp = spacy.blank("en")
    nlp.add_pipe("latentstruct_chunker", config={"model": str(path)})
    with pytest.raises(ConfigError, match="token.tag_.*put a tagger"):
        nlp("The cat sat .")


def test_an_untrained_component_needs_an_online_learner():
    with pytest.raises(ConfigError, match="learner 'ssvm' trains on the whole data.*perceptron"):
        spacy.blank("en").add_pipe("latentstruct_tagger", config={"learner": "ssvm"})
    with pytest.raises(ConfigError, match="latentstruct_tagger 'latentstruct_tagger'.*nope"):
        spacy.blank("en").add_pipe("latentstruct_tagger", config={"learner": "nope"})


def test_a_model_of_a_batch_learner_is_not_updated(tmp_path):
    Tagger().fit(WORDS, UPOS).save(tmp_path / "ssvm.npz")  # learner ssvm
    nlp = spacy.blank("en")
    nlp.add_pipe("latentstruct_tagger", config={"model": str(tmp_path / "ssvm.npz")})
    examples = _examples(nlp, WORDS, UPOS)
    nlp.initialize(lambda: examples)  # keeps the given model
    with pytest.raises(ConfigError, match="'ssvm'.*frozen_components"):
        nlp.update(examples)


def test_an_untrained_component_says_how_to_train_it():
    nlp = spacy.blank("en")
    nlp.add_pipe("latentstruct_tagger")
    with pytest.raises(ConfigError, match="has no model.*initialize"):
        nlp("The cat sat .")


# ------------------------------------------------------------------------------ training
def _examples(nlp, sentences, tags, attr="pos"):
    return [Example(Doc(nlp.vocab, words=w), Doc(nlp.vocab, words=w, **{attr: t}))
            for w, t in zip(sentences, tags)]


def test_initialize_and_update_train_as_partial_fit_does(tmp_path):
    nlp = spacy.blank("en")
    component = nlp.add_pipe("latentstruct_tagger", config={"options": {"shuffle": False}})
    examples = _examples(nlp, WORDS, UPOS)
    nlp.initialize(lambda: examples)
    assert component.labels == tuple(sorted({t for s in UPOS for t in s}))
    reference = Tagger(learner="perceptron", shuffle=False).begin_partial_fit(
        WORDS, UPOS, classes=sorted({t for s in UPOS for t in s}))
    for _ in range(3):
        losses = nlp.update(examples[:3])
        losses = nlp.update(examples[3:], losses=losses)
        reference.partial_fit(WORDS[:3], UPOS[:3]).partial_fit(WORDS[3:], UPOS[3:])
    assert np.array_equal(component.estimator_.learner_.coef_, reference.learner_.coef_)
    assert losses["latentstruct_tagger"] >= 0
    assert _tags(nlp.pipe(_docs(nlp, NEW)), "pos_") == reference.predict(NEW)
    scores = nlp.evaluate(examples)
    gold = [t for s in UPOS for t in s]
    pred = [t for s in reference.predict(WORDS) for t in s]
    assert scores["pos_acc"] == pytest.approx(np.mean([a == b for a, b in zip(gold, pred)]))
    nlp.to_disk(tmp_path / "trained")
    loaded = spacy.load(tmp_path / "trained")
    assert _tags(loaded.pipe(_docs(loaded, NEW)), "pos_") == reference.predict(NEW)
    # the saved model continues training where it stopped
    loaded.update(examples)
    reference.partial_fit(WORDS, UPOS)
    assert np.array_equal(loaded.get_pipe("latentstruct_tagger").estimator_.learner_.coef_,
                          reference.learner_.coef_)


def test_update_uses_the_alignment_when_tokens_differ():
    nlp = spacy.blank("en")
    component = nlp.add_pipe("latentstruct_tagger")
    ref = Doc(nlp.vocab, words=["The", "cat", "sat", "."], pos=["DET", "NOUN", "VERB", "PUNCT"])
    same = Example(nlp.make_doc("The cat sat."), ref)  # the tokenizer's tokens: the same
    merged = Example(Doc(nlp.vocab, words=["The", "cat", "sat."]), ref)  # "sat." unaligned
    nlp.initialize(lambda: [same, merged])
    assert component.labels == ("DET", "NOUN", "PUNCT", "VERB")
    X, y = component._training_data([same, merged])
    # the aligned example as the predicted tokens; the other as the reference Doc
    assert X == [["The", "cat", "sat", "."], ["The", "cat", "sat", "."]]
    assert y == [["DET", "NOUN", "VERB", "PUNCT"]] * 2


def test_chunker_and_parser_train_from_reference_docs():
    nlp = spacy.blank("en")
    chunker = nlp.add_pipe("latentstruct_chunker")
    parser = nlp.add_pipe("latentstruct_parser")
    examples = []
    for w, p, u, c, tree in zip(WORDS, PTB, UPOS, CHUNKS, TREES):
        ref = Doc(nlp.vocab, words=w, tags=p, pos=u,
                  heads=[h - 1 if h else i for i, (h, _) in enumerate(tree)],
                  deps=[r for _, r in tree])
        ref.spans["chunks"] = [Span(ref, s, e + 1, label=t)
                               for t, s, e in sorted(extract_chunks(c), key=lambda x: x[1])]
        examples.append(Example(Doc(nlp.vocab, words=w, tags=p, pos=u), ref))
    nlp.initialize(lambda: examples)
    pairs = [list(zip(w, p)) for w, p in zip(WORDS, PTB)]
    upairs = [list(zip(w, p)) for w, p in zip(WORDS, UPOS)]
    labels = sorted({t for s in CHUNKS for t in s})
    ref_chunker = Chunker(learner="perceptron").begin_partial_fit(pairs, CHUNKS, classes=labels)
    rels = sorted({r for tree in TREES for _, r in tree})
    ref_parser = DependencyParser(learner="perceptron").begin_partial_fit(upairs, TREES,
                                                                          classes=rels)
    for _ in range(5):
        nlp.update(examples)
        ref_chunker.partial_fit(pairs, CHUNKS)
        ref_parser.partial_fit(upairs, TREES)
    assert chunker.labels == tuple(labels) and parser.labels == tuple(rels)
    assert np.array_equal(chunker.estimator_.learner_.coef_, ref_chunker.learner_.coef_)
    assert np.array_equal(parser.estimator_.learner_.coef_, ref_parser.learner_.coef_)
    scores = nlp.evaluate(examples)
    assert scores["spans_chunks_f"] == pytest.approx(ref_chunker.score(pairs, CHUNKS))
    predicted = ref_parser.predict(upairs)
    n_words = sum(len(t) for t in TREES)  # punctuation is not scored by spaCy
    hits = sum(g[0] == p[0] for tg, tp, u in zip(TREES, predicted, UPOS)
               for g, p, pos in zip(tg, tp, u) if pos != "PUNCT")
    n_scored = n_words - sum(pos == "PUNCT" for s in UPOS for pos in s)
    assert scores["dep_uas"] == pytest.approx(hits / n_scored)

# ----------------------------------------------------------------------- spacy train
def _conllu_head(src: Path, dst: Path, start: int, stop: int) -> None:
    blocks = [b for b in src.read_text(encoding="utf-8").split("\n\n") if b.strip()]
    dst.write_text("\n\n".join(blocks[start:stop]) + "\n\n", encoding="utf-8")


def _spacy(*args, cwd):
    done = subprocess.run([sys.executable, "-m", "spacy", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done.stdout


@pytest.fixture(scope="module")
def ewt_corpus(tmp_path_factory):
    """300 training and 100 dev sentences of EWT, as CoNLL-U and as `spacy convert` writes
    them (train.spacy, dev.spacy), in one folder."""
    from latentstruct.testing import require_data

    train_src = require_data("ud_english_ewt", "en_ewt-ud-train.conllu")
    folder = tmp_path_factory.mktemp("ewt")
    _conllu_head(train_src, folder / "train.conllu", 0, 300)
    _conllu_head(train_src, folder / "dev.conllu", 300, 400)
    for part in ("train", "dev"):
        _spacy("convert", f"{part}.conllu", ".", "--converter", "conllu", "--n-sents", "1",
               cwd=folder)
    return folder


@pytest.mark.slow
@pytest.mark.data
def test_a_cli_trained_tagger_scores_in_spacy_as_latentstruct_evaluate(ewt_corpus, tmp_path,
                                                                       capsys):
    import json

    from latentstruct.cli import main

    model = tmp_path / "pos.npz"
    assert main(["train", "pos", "--train", str(ewt_corpus / "train.spacy"), "--learner",
                 "perceptron", "--model", str(model), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["evaluate", "--model", str(model), "--test",
                 str(ewt_corpus / "dev.conllu")]) == 0
    counts = json.loads(capsys.readouterr().out)["counts"]
    nlp = spacy.blank("en")
    nlp.add_pipe("latentstruct_tagger", config={"model": str(model)})
    dev = list(DocBin().from_disk(ewt_corpus / "dev.spacy").get_docs(nlp.vocab))
    examples = [Example(Doc(nlp.vocab, words=[t.text for t in d]), d) for d in dev]
    assert sum(len(d) for d in dev) == counts["tokens"]
    expected = counts["correct_tokens"] / counts["tokens"]  # to the token
    assert nlp.evaluate(examples)["pos_acc"] == pytest.approx(expected, abs=1e-12)
    nlp.to_disk(tmp_path / "pipeline")
    loaded = spacy.load(tmp_path / "pipeline")
    again = [Example(Doc(loaded.vocab, words=[t.text for t in d]), d) for d in dev]
    assert loaded.evaluate(again)["pos_acc"] == pytest.approx(expected, abs=1e-12)


@pytest.mark.slow
@pytest.mark.data
def test_spacy_train_and_evaluate_a_latentstruct_tagger(ewt_corpus, tmp_path):
    for part in ("train", "dev"):
        (tmp_path / f"{part}.spacy").write_bytes((ewt_corpus / f"{part}.spacy").read_bytes())
    _spacy("train", TAGGER_CFG, "--paths.train", "train.spacy", "--paths.dev", "dev.spacy",
           "--output", "out", "--training.eval_frequency", "2", cwd=tmp_path)
    best = tmp_path / "out" / "model-best"
    assert (best / "latentstruct_tagger" / "model.npz").is_file()
    _spacy("evaluate", "out/model-last", "dev.spacy", "--gold-preproc", "--output",
           "scores.json", cwd=tmp_path)
    import json

    spacy_acc = json.loads((tmp_path / "scores.json").read_text())["pos_acc"]

    # the same ten epochs as the estimator's partial_fit, on the same sentences
    nlp = spacy.blank("en")
    train = list(DocBin().from_disk(tmp_path / "train.spacy").get_docs(nlp.vocab))
    dev = list(DocBin().from_disk(tmp_path / "dev.spacy").get_docs(nlp.vocab))
    X = [[t.text for t in d] for d in train]
    y = [[t.pos_ for t in d] for d in train]
    est = Tagger(learner="perceptron").fit(X, y)
    est_acc = est.score([[t.text for t in d] for d in dev], [[t.pos_ for t in d] for d in dev])
    assert 0.8 < spacy_acc
    assert abs(spacy_acc - est_acc) < 0.03, (spacy_acc, est_acc)

    # the trained pipeline, loaded, tags its dev Docs as `spacy evaluate` scored them
    loaded = spacy.load(tmp_path / "out" / "model-last")
    docs = list(loaded.pipe(Doc(loaded.vocab, words=[t.text for t in d]) for d in dev))
    gold = [t.pos_ for d in dev for t in d]
    pred = [t.pos_ for d in docs for t in d]
    assert np.mean([a == b for a, b in zip(gold, pred)]) == pytest.approx(spacy_acc)


def test_whitespace_tokens_are_left_out_of_the_models_input(models):
    tagger_est, tagger = models["pos"]
    chunk_est, chunker = models["chunk"]
    parse_est, parser = models["dep"]
    nlp = spacy.blank("en")
    nlp.add_pipe("latentstruct_tagger", config={"model": str(tagger)})
    nlp.add_pipe("latentstruct_chunker", config={"model": str(chunker)})
    nlp.add_pipe("latentstruct_parser", config={"model": str(parser)})
    words = ["The", "cat", "  ", "sat", "on", "the", "mat", ".", "\n"]
    kept = [0, 1, 3, 4, 5, 6, 7]
    ptb = ["DT", "NN", "_SP", "VBD", "IN", "DT", "NN", ".", "_SP"]
    doc = nlp(Doc(nlp.vocab, words=words, tags=ptb))
    plain = [words[i] for i in kept]
    tags = tagger_est.predict([plain])[0]
    assert [t.pos_ for t in doc] == [tags[kept.index(i)] if i in kept else "SPACE"
                                     for i in range(len(words))]
    chunks = extract_chunks(chunk_est.predict([[(words[i], ptb[i]) for i in kept]])[0])
    assert [(s.label_, s.start, s.end - 1) for s in doc.spans["chunks"]] == \
        [(t, kept[a], kept[b]) for t, a, b in sorted(chunks, key=lambda c: c[1])]
    tree = parse_est.predict([[(words[i], tags[k]) for k, i in enumerate(kept)]])[0]
    assert [doc[i].head.i for i in kept] == [kept[h - 1] if h else i
                                            for i, (h, _) in zip(kept, tree)]
    assert doc[2].head.i == 1 and doc[8].head.i == 7 and doc[2].dep_ == "dep"


@pytest.mark.slow
@pytest.mark.data
def test_spacy_train_a_tagger_and_chunker_on_conll2000(require_data, tmp_path):
    src = require_data("conll2000", "train.txt")
    blocks = [b for b in src.read_text(encoding="utf-8").split("\n\n") if b.strip()]
    (tmp_path / "train.txt").write_text("\n\n".join(blocks[:300]) + "\n\n", encoding="utf-8")
    (tmp_path / "dev.txt").write_text("\n\n".join(blocks[300:400]) + "\n\n", encoding="utf-8")
    for part in ("train", "dev"):
        _spacy("convert", f"{part}.txt", ".", "--converter", "ner", "--n-sents", "1",
               cwd=tmp_path)
    _spacy("train", REPO / "examples" / "spacy" / "chunker.cfg", "--paths.train",
           "train.spacy", "--paths.dev", "dev.spacy", "--output", "out",
           "--training.eval_frequency", "2", cwd=tmp_path)
    _spacy("evaluate", "out/model-last", "dev.spacy", "--gold-preproc", "--output",
           "scores.json", cwd=tmp_path)
    import json

    scores = json.loads((tmp_path / "scores.json").read_text())
    assert scores["spans_chunks_f"] > 0.75 and scores["tag_acc"] > 0.85

    # the pipeline's chunks are the chunker estimator's on the tagger estimator's tags
    nlp = spacy.load(tmp_path / "out" / "model-last")
    tagger = nlp.get_pipe("latentstruct_tagger").estimator_
    chunker = nlp.get_pipe("latentstruct_chunker").estimator_
    dev = list(DocBin().from_disk(tmp_path / "dev.spacy").get_docs(nlp.vocab))
    words = [[t.text for t in d] for d in dev]
    tags = tagger.predict(words)
    chunks = chunker.predict([list(zip(w, t)) for w, t in zip(words, tags)])
    docs = list(nlp.pipe(Doc(nlp.vocab, words=w) for w in words))
    assert [[t.tag_ for t in d] for d in docs] == tags
    assert [[(s.label_, s.start, s.end - 1) for s in d.spans["chunks"]] for d in docs] == \
        [sorted(extract_chunks(c), key=lambda x: x[1]) for c in chunks]
    # spacy evaluate's F1 is conlleval's over the same chunks
    gold = [[(e.label_, e.start, e.end - 1) for e in d.ents] for d in dev]
    pred = [sorted(extract_chunks(c), key=lambda x: x[1]) for c in chunks]
    hits = sum(len(set(g) & set(p)) for g, p in zip(gold, pred))
    n_gold, n_pred = sum(map(len, gold)), sum(map(len, pred))
    assert scores["spans_chunks_f"] == pytest.approx(2 * hits / (n_gold + n_pred), abs=1e-9)


# ------------------------------------------------------------------ latentstruct_crf
def _crf_features(doc):
    """sklearn-crfsuite's tutorial features, over a Doc or a sentence Span."""
    tokens = list(doc)
    out = []
    for i, t in enumerate(tokens):
        f = {"bias": 1.0, "word.lower()": t.lower_, "word[-3:]": t.text[-3:],
             "word.istitle()": t.text.istitle()}
        f.update({"-1:word.lower()": tokens[i - 1].lower_} if i else {"BOS": True})
        f.update({"+1:word.lower()": tokens[i + 1].lower_} if i + 1 < len(tokens)
                 else {"EOS": True})
        out.append(f)
    return out


@spacy.registry.misc("latentstruct_test_crf_features.v1")
def _make_crf_features():
    return _crf_features


@spacy.registry.misc("latentstruct_test_crf_one_short.v1")
def _make_one_short():
    return lambda doc: _crf_features(doc)[:-1]


FEATURES = {"@misc": "latentstruct_test_crf_features.v1"}
NER_WORDS = [["Ann", "met", "Bob", "in", "Paris", "."], ["IBM", "hired", "Ann", "Lee", "."],
             ["Bob", "left", "Paris", "."], ["Lee", "visited", "IBM", "in", "Rome", "."]]
NER = [["B-PER", "O", "B-PER", "O", "B-LOC", "O"], ["B-ORG", "O", "B-PER", "I-PER", "O"],
       ["B-PER", "O", "B-LOC", "O"], ["B-PER", "O", "B-ORG", "O", "B-LOC", "O"]]


def _dicts(sentences):
    vocab = spacy.blank("en").vocab
    return [_crf_features(Doc(vocab, words=w)) for w in sentences]


@pytest.fixture(scope="module")
def crf_models(tmp_path_factory):
    """CRFs of latentstruct.crfsuite (sklearn-crfsuite's API) on the tutorial features, with
    their model files (model_filename)."""
    from latentstruct.crfsuite import CRF

    folder = tmp_path_factory.mktemp("crf")
    pos = CRF(algorithm="lbfgs", c1=0.1, c2=0.1, max_iterations=50,
              model_filename=str(folder / "pos.npz")).fit(_dicts(WORDS), UPOS)
    ner = CRF(algorithm="lbfgs", c2=0.1, max_iterations=50,
              model_filename=str(folder / "ner.npz")).fit(_dicts(NER_WORDS), NER)
    return {"pos": (pos, folder / "pos.npz"), "ner": (ner, folder / "ner.npz")}


def test_crf_component_tags_as_crf_predict_and_survives_to_disk(crf_models, tmp_path):
    crf, path = crf_models["pos"]
    nlp = spacy.blank("en")
    component = nlp.add_pipe("latentstruct_crf", config={"model": str(path),
                                                         "features": FEATURES})
    assert type(component).__name__ == "LatentstructCRF"
    assert component.writes == "tag_"  # UPOS labels are no entity tags
    sentences = WORDS + NEW
    expected = crf.predict(_dicts(sentences))
    docs = list(nlp.pipe(_docs(nlp, sentences), batch_size=4))
    assert _tags(docs, "tag_") == expected
    assert set(component.labels) == set(crf.classes_)

    nlp.to_disk(tmp_path / "pipeline")
    assert sorted(p.name for p in (tmp_path / "pipeline" / "latentstruct_crf").iterdir()) \
        == ["cfg.json", "model.npz"]
    # the feature function is its registry name in the config, not a module or a pickle
    assert "latentstruct_test_crf_features.v1" in (tmp_path / "pipeline" / "config.cfg").read_text()
    moved = tmp_path / "moved.npz"
    path.rename(moved)
    try:
        loaded = spacy.load(tmp_path / "pipeline")
        assert _tags(loaded.pipe(_docs(loaded, sentences)), "tag_") == expected
        again = loaded(loaded.make_doc("The old dog sat on the mat ."))
        assert [t.tag_ for t in again] == crf.predict(
            _dicts([["The", "old", "dog", "sat", "on", "the", "mat", "."]]))[0]
    finally:
        moved.rename(path)

    # pos_, and a Doc with sentences: the feature function sees each sentence
    nlp = spacy.blank("en")
    nlp.add_pipe("latentstruct_crf", config={"model": str(path), "features": FEATURES,
                                             "attr": "pos_"})
    words = NEW[0] + NEW[1]
    starts = [True] + [False] * (len(NEW[0]) - 1) + [True] + [False] * (len(NEW[1]) - 1)
    doc = nlp(Doc(nlp.vocab, words=words, sent_starts=starts))
    assert [t.pos_ for t in doc] == sum(crf.predict(_dicts(NEW[:2])), [])
    assert [t.tag_ for t in doc] == [""] * len(words)
    # an in-memory CRF, and bytes
    blank = spacy.blank("en")
    blank.add_pipe("latentstruct_crf", config={"features": FEATURES}).set_crf(crf)
    assert _tags(blank.pipe(_docs(blank, NEW)), "tag_") == crf.predict(_dicts(NEW))
    other = spacy.blank("en")
    other.add_pipe("latentstruct_crf", config={"features": FEATURES})
    other.from_bytes(blank.to_bytes())
    assert _tags(other.pipe(_docs(other, NEW)), "tag_") == crf.predict(_dicts(NEW))


def test_crf_component_writes_entities_for_entity_tags(crf_models, tmp_path):
    crf, path = crf_models["ner"]
    nlp = spacy.blank("en")
    component = nlp.add_pipe("latentstruct_crf", config={"model": str(path),
                                                         "features": FEATURES})
    assert component.writes == "ents"
    sentences = NER_WORDS + [["Ann", "left", "Rome", "."]]
    predicted = crf.predict(_dicts(sentences))
    docs = list(nlp.pipe(_docs(nlp, sentences)))
    assert [[(e.label_, e.start, e.end - 1) for e in d.ents] for d in docs] == \
        [sorted(extract_chunks(p), key=lambda c: c[1]) for p in predicted]
    assert [[t.ent_iob_ + ("-" + t.ent_type_ if t.ent_type_ else "") for t in d]
            for d in docs] == predicted  # IOB2 labels read back as spaCy writes them
    examples = [Example(Doc(nlp.vocab, words=w), Doc(nlp.vocab, words=w, ents=t))
                for w, t in zip(NER_WORDS, NER)]
    gold = [extract_chunks(t) for t in NER]
    pred = [extract_chunks(p) for p in crf.predict(_dicts(NER_WORDS))]
    hits = sum(len(g & p) for g, p in zip(gold, pred))
    f1 = 2 * hits / (sum(map(len, gold)) + sum(map(len, pred)))
    assert nlp.evaluate(examples)["ents_f"] == pytest.approx(f1)
    nlp.to_disk(tmp_path / "ner")
    loaded = spacy.load(tmp_path / "ner")
    assert [[(e.label_, e.start, e.end) for e in d.ents] for d in loaded.pipe(
        _docs(loaded, sentences))] == [[(e.label_, e.start, e.end) for e in d.ents] for d in docs]
    # the same labels as tags, when asked
    tags = spacy.blank("en")
    tags.add_pipe("latentstruct_crf", config={"model": str(path), "features": FEATURES,
                                              "attr": "tag_"})
    assert _tags(tags.pipe(_docs(tags, sentences)), "tag_") == predicted


def test_crf_component_reads_a_crfsuite_model_file(tmp_path):
    pycrfsuite = pytest.importorskip("pycrfsuite")
    trainer = pycrfsuite.Trainer(verbose=False)
    for x, y in zip(_dicts(WORDS), UPOS):
        trainer.append(x, y)
    trainer.set_params({"c2": 0.1, "max_iterations": 30})
    trainer.train(str(tmp_path / "pos.crfsuite"))
    tagger = pycrfsuite.Tagger()
    tagger.open(str(tmp_path / "pos.crfsuite"))
    nlp = spacy.blank("en")
    nlp.add_pipe("latentstruct_crf", config={"model": str(tmp_path / "pos.crfsuite"),
                                             "features": FEATURES})
    assert _tags(nlp.pipe(_docs(nlp, NEW)), "tag_") == [tagger.tag(x) for x in _dicts(NEW)]
    nlp.to_disk(tmp_path / "pipeline")  # saved in latentstruct's format
    loaded = spacy.load(tmp_path / "pipeline")
    assert _tags(loaded.pipe(_docs(loaded, NEW)), "tag_") == [tagger.tag(x) for x in _dicts(NEW)]


def test_crf_component_bad_inputs(crf_models, models, tmp_path):
    _, path = crf_models["pos"]
    # a feature function that no code registered: spaCy's registry says so, by its name
    with pytest.raises(ValueError, match="latentstruct_test_nope.v1"):  # RegistryError
        spacy.blank("en").add_pipe("latentstruct_crf", config={
            "model": str(path), "features": {"@misc": "latentstruct_test_nope.v1"}})
    # no feature function at all
    with pytest.raises(ValueError, match="features"):  # ConfigValidationError
        spacy.blank("en").add_pipe("latentstruct_crf", config={"model": str(path)})
    # one dict short
    nlp = spacy.blank("en")
    nlp.add_pipe("latentstruct_crf", config={
        "model": str(path), "features": {"@misc": "latentstruct_test_crf_one_short.v1"}})
    with pytest.raises(ConfigError, match="returned 6 feature dicts for 7 tokens"):
        nlp(Doc(nlp.vocab, words=WORDS[0]))
    # a model that reads words, not dicts: the component that takes it is named
    _, tagger_path = models["pos"]
    with pytest.raises(ConfigError, match="latentstruct_tagger") as info:
        spacy.blank("en").add_pipe("latentstruct_crf", config={"model": str(tagger_path),
                                                               "features": FEATURES})
    assert "feature dicts" in str(info.value)
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a model")
    with pytest.raises(ModelFormatError, match="bad.npz"):
        spacy.blank("en").add_pipe("latentstruct_crf", config={"model": str(bad),
                                                               "features": FEATURES})
    with pytest.raises(ConfigError, match="IOB entity tags"):
        spacy.blank("en").add_pipe("latentstruct_crf", config={
            "model": str(path), "features": FEATURES, "attr": "ents"})
    with pytest.raises(ConfigError, match="attr must be"):
        spacy.blank("en").add_pipe("latentstruct_crf", config={"features": FEATURES,
                                                               "attr": "lemma_"})
    # a missing file, and no model: one clear error each
    nlp = spacy.blank("en")
    nlp.add_pipe("latentstruct_crf", config={"model": str(tmp_path / "nope.npz"),
                                             "features": FEATURES})
    with pytest.raises(ConfigError, match="nope.npz.*does not exist"):
        nlp("The cat sat .")
    nlp = spacy.blank("en")
    nlp.add_pipe("latentstruct_crf", config={"features": FEATURES})
    with pytest.raises(ConfigError, match="has no model.*set_crf"):
        nlp("The cat sat .")


def test_crf_component_is_not_updated_by_spacy(crf_models):
    crf, path = crf_models["pos"]
    nlp = spacy.blank("en")
    component = nlp.add_pipe("latentstruct_crf", config={"model": str(path),
                                                         "features": FEATURES})
    assert component.is_trainable is False
    examples = [Example(Doc(nlp.vocab, words=w), Doc(nlp.vocab, words=w, tags=t))
                for w, t in zip(WORDS, UPOS)]
    nlp.initialize(lambda: examples)  # keeps the model
    with pytest.raises(ConfigError, match="frozen_components"):
        nlp.update(examples)
    assert nlp.update(examples, exclude=["latentstruct_crf"]) == {}
    assert _tags(nlp.pipe(_docs(nlp, NEW)), "tag_") == crf.predict(_dicts(NEW))
    assert nlp.evaluate(examples)["tag_acc"] == pytest.approx(crf.score(_dicts(WORDS), UPOS))


def test_a_saved_crf_pipeline_loads_in_a_new_process_only_with_its_feature_function(
        crf_models, tmp_path):
    crf, path = crf_models["pos"]
    nlp = spacy.blank("en")
    nlp.add_pipe("latentstruct_crf", config={"model": str(path), "features": FEATURES})
    nlp.to_disk(tmp_path / "pipeline")
    load = (f"import spacy\nnlp = spacy.load({str(tmp_path / 'pipeline')!r})\n"
            f"print(' '.join(t.tag_ for t in nlp('The old dog sat on the mat .')))\n")
    # the registry name in config.cfg is looked up, never a module imported from the folder
    bare = subprocess.run([sys.executable, "-c", load], capture_output=True, text=True,
                          timeout=600)
    assert bare.returncode != 0 and "latentstruct_test_crf_features.v1" in bare.stderr
    # the user's code registers the function before loading: the pipeline tags as the CRF
    import inspect

    register = (f"import spacy\n{inspect.getsource(_crf_features)}\n"
                f"spacy.registry.misc('latentstruct_test_crf_features.v1')"
                f"(lambda: _crf_features)\n")
    done = subprocess.run([sys.executable, "-c", register + load], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    words = ["The", "old", "dog", "sat", "on", "the", "mat", "."]
    assert done.stdout.split() == crf.predict(_dicts([words]))[0]
