"""The fast path from feature dicts to the corpus (``tasks.sequence.dict_fast``, what
``predict`` runs): on feature dicts of every value kind it gives exactly the ids, values and
predictions of ``featurize(make_dataset(X))``, and any input that path refuses makes it step
aside, so that the same error is raised."""

from __future__ import annotations

import math
import pickle
import random
import warnings
from collections import OrderedDict

import numpy as np
import pytest

from latentstruct.crfsuite import CRF
from latentstruct.exceptions import InputError
from latentstruct.tasks import SequenceTask
from latentstruct.tasks.sequence.dict_fast import dict_corpus, dict_lookup
from latentstruct.tasks.sequence.labelling import SequenceLabellingTask

KEYS = ["w", "w:len", "-1", "-1:w", "pos", "bias", "shape", "a:b", "a", "n", "lst", "é:ü"]
WORDS = ["the", "dog", "a:b", "b", "", "x:y:z", "ü", "1", "True"]
NUMBERS = [0, 1, 0.0, 1.0, -0.0, 0.5, -2.5, 3, -7, 1e6, -1e6, 2.0]


def _value(rng: random.Random, depth: int = 0):
    kind = rng.randrange(9 if depth < 2 else 7)
    if kind <= 2:
        return rng.choice(WORDS)
    if kind == 3:
        return rng.choice(NUMBERS)
    if kind == 4:
        return rng.random() < 0.5
    if kind == 5:
        return [rng.choice(WORDS) for _ in range(rng.randrange(3))]
    if kind == 6:
        return rng.choice([tuple, set])(rng.choice(WORDS) for _ in range(rng.randrange(3)))
    return {rng.choice(KEYS): _value(rng, depth + 1) for _ in range(rng.randrange(3))}


def _token(rng: random.Random, plain: bool) -> dict:
    """A feature dict: plain (str, number and bool values, keys no ``key:`` prefix of
    another) or of every kind."""
    if rng.random() < 0.05:
        return {}
    if plain:
        keys = rng.sample(["w", "pos", "bias", "shape", "-1:w", "+1:w", "é"], rng.randrange(1, 7))
        return {k: rng.choice([rng.choice(WORDS), rng.choice(NUMBERS), rng.random() < 0.5])
                for k in keys}
    return {rng.choice(KEYS): _value(rng) for _ in range(rng.randrange(6))}


def _sentences(seed: int, n: int, plain_share: float = 0.5) -> list:
    rng = random.Random(seed)
    return [[_token(rng, rng.random() < plain_share) for _ in range(rng.randrange(1, 7))]
            for _ in range(n)]


def _labels(X, seed: int = 0) -> list:
    rng = random.Random(seed)
    return [[rng.choice("XYZ") for _ in s] for s in X]


@pytest.fixture(scope="module")
def task():
    X = _sentences(0, 150)
    t = SequenceTask()
    t.fit(t.make_dataset(X, _labels(X)))
    return t


def _slow(task, X):
    return task.featurize(task.make_dataset(X))


def _assert_same(fast, slow):
    assert fast is not None
    assert fast.attr_indptr.tolist() == slow.attr_indptr.tolist()
    assert fast.attr_ids.tolist() == slow.attr_ids.tolist()
    assert fast.offsets.tolist() == slow.offsets.tolist()
    assert (fast.attr_values is None) == (slow.attr_values is None)
    if slow.attr_values is not None:
        assert fast.attr_values.dtype == slow.attr_values.dtype == np.float64
        # bit for bit: the same floats, signs of zero included
        assert fast.attr_values.tobytes() == slow.attr_values.tobytes()
    for name in ("attr_indptr", "attr_ids", "offsets"):
        assert getattr(fast, name).dtype == np.int64


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("plain_share", [0.0, 0.5, 1.0])
def test_random_dicts_of_every_kind_give_the_slow_paths_corpus(task, seed, plain_share):
    X = _sentences(100 + seed, 40, plain_share)
    _assert_same(dict_corpus(X, task.featurizer_), _slow(task, X))


def test_the_random_test_sentences_hold_every_case(task):
    """What the random comparison covers: unseen attributes, empty tokens, real values
    kept and dropped, nested dicts and lists (the slow function's sentences)."""
    X = [s for seed in range(12) for s in _sentences(100 + seed, 40, 0.5)]
    slow = _slow(task, X)
    index = task.attr_index_
    names = [n for s in task.make_dataset(X).records for n in s.names]
    assert any(index.lookup(n) < 0 for n in names) and any(index.lookup(n) >= 0 for n in names)
    assert any(len(tok) == 0 for s in X for tok in s)
    assert slow.attr_values is not None and set(slow.attr_values.tolist()) - {1.0}
    values = [v for s in X for tok in s for v in tok.values()]
    assert any(isinstance(v, dict) for v in values) and any(isinstance(v, list) for v in values)


def test_plain_sentences_take_the_table(task, monkeypatch):
    from latentstruct.tasks.sequence import dict_fast

    X = [[{"w": "the", "bias": 1.0, "pos": True, "shape": 0.5},
          {"w": "unseen-word", "bias": 1, "pos": False, "-1:w": "the"}]]
    with monkeypatch.context() as m:  # no token of theirs goes through the slow function
        m.setattr(dict_fast, "feature_dict_items", None)
        fast = dict_corpus(X, task.featurizer_)
        plain = _sentences(5, 50, 1.0)
        _assert_same(dict_corpus(plain, task.featurizer_), _slow(task, plain))
    _assert_same(fast, _slow(task, X))
    ids = task.attr_index_
    bias = ids.lookup("bias")
    assert bias >= 0
    assert fast.attr_ids.tolist().count(bias) == 2
    assert dict_lookup(ids).table[("bias", True)] == bias


@pytest.mark.parametrize("tokens", [
    # one attribute named twice: the slow path sums the values
    [{"a": "b", "a:b": True}],
    [{"a:b": False, "a": "b"}],
    [{"a": "b", "a:b": 0.5}],
    [{"-1": "w:the", "-1:w": "the"}],
    [{"w": "the"}, {"w": "dog", "w:len": 3}],
    # keys and values of other types than str, float, int, bool
    [{"w": np.float64(0.5), "pos": np.bool_(True), "bias": np.int64(1)}],
    [{b"w": b"the", "pos": "NN"}],
    [{"w": ["the", "dog"], "pos": ("a", "a"), "n": {"w": "the", "bias": 2}}],
    [{"w": {"b", "a"}, "lst": frozenset({"z"})}],
    [{"": "the", "w": "dog"}],
    [{"": {"": 2, "w": "the"}}],
    [{}, {}, {"w": "the"}],
    # all values 0 or 1: no attr_values; a real value of an unseen attribute keeps them
    [{"w": "the", "pos": False, "bias": 1.0, "shape": 0}],
    [{"w": "the", "never-seen-key": 0.25}],
    [{"w": "the", "bias": 1e6, "shape": -1e6, "pos": -0.0}],
])
def test_special_cases_give_the_slow_paths_corpus(task, tokens):
    X = [tokens, [{"w": "dog", "bias": 1.0}]]
    _assert_same(dict_corpus(X, task.featurizer_), _slow(task, X))


def test_values_kept_or_not_as_the_slow_path_decides(task):
    binary = [[{"w": "the", "pos": False, "bias": 1.0}]]
    assert dict_corpus(binary, task.featurizer_).attr_values is None
    # a real value of an unseen attribute: dropped, but the values are kept (all 1 here)
    unseen_real = dict_corpus([[{"w": "the", "never-seen-key": 0.25}]], task.featurizer_)
    assert unseen_real.attr_ids.tolist() == [task.attr_index_.lookup("w:the")]
    assert unseen_real.attr_values.tolist() == [1.0]


def test_other_containers_are_read_alike_or_left_to_the_slow_path(task):
    X = [({"w": "the", "bias": 0.5},), [{"w": "dog"}]]
    _assert_same(dict_corpus(tuple(X), task.featurizer_), _slow(task, X))
    # an OrderedDict, a list of attribute strings: the slow path's (no fast corpus)
    assert dict_corpus([[OrderedDict(w="the")]], task.featurizer_) is None
    assert dict_corpus([[["w:the", "pos:NN"]]], task.featurizer_) is None
    assert dict_corpus(iter(X), task.featurizer_) is None


BAD = [
    ("nan", [[{"w": "the"}], [{"w": "the", "bias": math.nan}]]),
    ("inf", [[{"w": "the", "bias": -math.inf}]]),
    ("too large", [[{"w": "the"}, {"bias": 1e6 + 1}]]),
    ("huge int", [[{"bias": 10 ** 400}]]),
    ("None", [[{"w": None}]]),
    ("complex one", [[{"bias": complex(1, 0)}]]),
    ("complex zero", [[{"pos": 0j}]]),
    ("object", [[{"w": object()}]]),
    ("int key", [[{"w": "the", 3: "x"}]]),
    ("empty key, number", [[{"": 1.0}]]),
    ("empty key, bool", [[{"": True}]]),
    ("bad bytes", [[{"w": b"\xff"}]]),
    ("list of numbers", [[{"w": ["a", 3]}]]),
    ("empty sentence", [[{"w": "the"}], []]),
    ("string sentence", [[{"w": "the"}], "the dog"]),
    ("int token", [[{"w": "the"}, 3]]),
    ("no sentences", []),
    ("a string", "the dog"),
    ("numbers", [[1.0, 2.0]]),
    ("first bad of two", [[{"w": "the", "bias": math.nan}], [{"w": None}]]),
]


@pytest.mark.parametrize("X", [x for _, x in BAD], ids=[name for name, _ in BAD])
def test_bad_input_leaves_it_to_the_slow_path_which_raises(task, X):
    assert dict_corpus(X, task.featurizer_) is None
    assert task.featurize_raw(X) is None
    with pytest.raises(InputError):
        task.make_dataset(X)


def test_the_message_names_the_sentence_and_the_token(crf):
    with pytest.raises(InputError, match=r"X\[1\]\[2\]: attribute 'bias' has the value nan"):
        crf.predict([[{"w": "the"}], [{"w": "a"}, {}, {"bias": math.nan}]])


def test_other_kinds_and_hashing_take_the_slow_path():
    X = _sentences(3, 20, 1.0)
    hashed = SequenceTask(feature_index="hashing", hash_bits=10)
    hashed.fit(hashed.make_dataset(X, _labels(X)))
    assert dict_corpus(X, hashed.featurizer_) is None
    assert hashed.featurize_raw(X) is None


# ----------------------------------------------------------------------------------------
# predictions: the estimator's fast path against its records' path
# ----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def crf():
    X = _sentences(7, 120, 0.7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return CRF(max_iterations=15, c1=0.01, c2=0.01, constrained=False).fit(
            X, _labels(X, 1))


def _slow_predictions(crf, X, monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(SequenceLabellingTask, "featurize_raw", lambda self, X: None)
        return crf.predict(X)


@pytest.mark.parametrize("seed", range(4))
def test_predictions_are_the_slow_paths(crf, seed, monkeypatch):
    X = _sentences(200 + seed, 60, 0.6)
    fast = crf.predict(X)
    assert fast == _slow_predictions(crf, X, monkeypatch)
    assert len(fast) == 60 and all(len(p) == len(s) for p, s in zip(fast, X))
    task = crf._fitted().task_
    assert task.featurize_raw(X) is not None  # the fast path did run


def test_a_pickled_model_and_a_model_file_predict_alike(crf, tmp_path, monkeypatch):
    X = _sentences(300, 30, 0.6)
    expected = crf.predict(X)
    assert pickle.loads(pickle.dumps(crf)).predict(X) == expected
    path = tmp_path / "model.npz"
    crf._fitted().save(path)
    assert CRF(model_filename=path).predict(X) == expected
    assert _slow_predictions(crf, X, monkeypatch) == expected


@pytest.mark.parametrize("X", [x for _, x in BAD], ids=[name for name, _ in BAD])
def test_predict_raises_the_slow_paths_error(crf, X, monkeypatch):
    with pytest.raises(Exception) as fast:
        crf.predict(X)
    with pytest.raises(Exception) as slow, monkeypatch.context() as m:
        m.setattr(SequenceLabellingTask, "featurize_raw", lambda self, X: None)
        crf.predict(X)
    assert type(fast.value) is type(slow.value)
    assert str(fast.value) == str(slow.value)


# ----------------------------------------------------------------------------------------
# the templates of raw tokens, built column by column: the same strings as token by token
# ----------------------------------------------------------------------------------------
def _reference_token_attributes(words, pos, *, window, affix_length):
    """The templates token by token, as they were written before (the reference)."""
    from latentstruct.featurizers.templates import word_shape

    lower = [w.lower() for w in words]
    pad = max(window, 1)
    pad_l = ["<s>"] * pad + lower + ["</s>"] * pad
    pad_p = None if pos is None else ["<s>"] * pad + list(pos) + ["</s>"] * pad
    out = []
    for t, (w, lw) in enumerate(zip(words, lower)):
        c = t + pad
        attrs = ["b", "w=" + w, "sh=" + word_shape(w)]
        for k in range(1, affix_length + 1):
            if len(lw) >= k:
                attrs += [f"p{k}={lw[:k]}", f"s{k}={lw[-k:]}"]
        attrs += [f"l[{d}]={pad_l[c + d]}" for d in range(-window, window + 1)]
        attrs += [f"l[-1]|l[0]={pad_l[c - 1]}|{lw}", f"l[0]|l[1]={lw}|{pad_l[c + 1]}"]
        if pad_p is not None:
            attrs += [f"p[{d}]={pad_p[c + d]}" for d in range(-window, window + 1)]
            attrs += [f"p[{d}]|p[{d + 1}]={pad_p[c + d]}|{pad_p[c + d + 1]}"
                      for d in range(-window, window)]
            attrs += [f"p[{d}..{d + 2}]={pad_p[c + d]}|{pad_p[c + d + 1]}|{pad_p[c + d + 2]}"
                      for d in range(-window, window - 1)]
        out.append(attrs)
    return out


@pytest.mark.parametrize("seed", range(5))
def test_templates_are_the_token_by_token_strings(seed):
    from latentstruct.featurizers.templates import token_attributes

    rng = random.Random(seed)
    for _ in range(200):
        n = rng.randrange(0, 8)
        words = ["".join(rng.choice("aAZ9.-ü|:=<>ß") for _ in range(rng.randrange(1, 6)))
                 for _ in range(n)]
        pos = None if rng.random() < 0.3 else [rng.choice(["NN", "DT", "<s>", "|"])
                                               for _ in range(n)]
        window, affix_length = rng.randrange(0, 4), rng.randrange(0, 5)
        assert token_attributes(words, pos, window=window, affix_length=affix_length) == \
            _reference_token_attributes(words, pos, window=window, affix_length=affix_length)


def test_template_sentences_look_their_names_up_once_with_the_same_ids():
    from latentstruct.tasks.sequence import ChunkTask

    train = [[("The", "DT"), ("dog", "NN")], [("A", "DT"), ("cat", "NN"), ("ran", "VBD")]]
    task = ChunkTask()
    task.fit(task.make_dataset(train, [["B-NP", "I-NP"], ["B-NP", "I-NP", "B-VP"]]))
    X = [[("the", "DT"), ("Dog", "NN"), ("ran", "VB")], [("zebra", "XX")]]
    corpus = task.featurize(task.make_dataset(X))
    index = task.attr_index_
    expected = [index.lookup_many(tok)
                for s in X for tok in task.featurizer_.template_attributes(
                    ([w for w, _ in s], [p for _, p in s]))]
    assert corpus.attr_ids.tolist() == [i for a in expected for i in a.tolist()]
    assert np.diff(corpus.attr_indptr).tolist() == [len(a) for a in expected]
    assert corpus.offsets.tolist() == [0, 3, 4] and corpus.attr_values is None


@pytest.mark.parametrize("char", [" ", "\t", "\n", "\x0b", "\x1c", "\x1f", "\x85", "\xa0",
                                  "\u2028", "\u3000", "\u200b", "_", "é"])
def test_a_word_with_white_space_is_refused_as_before(char):
    from latentstruct.tasks.validation import raw_string

    word = "a" + char + "b"
    if char.isspace():
        with pytest.raises(InputError, match="holds white space"):
            raw_string(word, 0, "word", allow_space=False)
    else:
        assert raw_string(word, 0, "word", allow_space=False) == word


@pytest.mark.parametrize("algorithm", ["lbfgs", "ap"])
def test_marginals_are_the_slow_paths(algorithm, monkeypatch):
    X = _sentences(11, 40, 0.7)
    model = CRF(algorithm=algorithm, max_iterations=5, constrained=False).fit(X, _labels(X, 2))
    test = _sentences(12, 15, 0.7)
    fast = model.predict_marginals(test)
    with monkeypatch.context() as m:
        m.setattr(SequenceLabellingTask, "featurize_raw", lambda self, X: None)
        slow = model.predict_marginals(test)
    assert fast == slow and len(fast) == 15
