"""Reading CRFsuite model files (issue 42): ``latentstruct.data.crfsuite_file``.

The semantics are checked end to end against python-crfsuite itself: a model that
``pycrfsuite.Trainer`` wrote, read by our reader, scored with CRFsuite's rule (emission
Σ_a value_a · W[a, y], unknown attributes ignored; transitions[prev, next]; no start or end
scores) and decoded by latentstruct's own Viterbi and forward-backward, gives the tags and
marginals of ``pycrfsuite.Tagger``.  Every malformed file is one ModelFormatError whose
message names the file, what was expected and what was found.
"""

from __future__ import annotations

import math
import random
import struct
import zlib

import numpy as np
import pycrfsuite  # a test dependency (pyproject's "test" extra): absent, the run fails
import pytest

from latentstruct.data import CRFsuiteModel, read_crfsuite_model
from latentstruct.data.crfsuite_file import MAX_CRFSUITE_BYTES_ENV
from latentstruct.exceptions import ModelFormatError
from latentstruct.inference import viterbi
from latentstruct.inference.chain_fb import chain_marginals_batch

HEADER = struct.Struct("<4sI4sIIIIIIIII")


# --------------------------------------------------------------------------------------
# helpers: CRFsuite's scoring rule, on the arrays the reader returns
# --------------------------------------------------------------------------------------
def emission_scores(model: CRFsuiteModel, W: np.ndarray, ids: dict, items) -> np.ndarray:
    """(T, L): Σ_a value_a · W[a, y] over each item's (attribute, value) pairs, attributes
    the model does not know ignored (as CRFsuite does)."""
    U = np.zeros((len(items), model.n_labels))
    for t, item in enumerate(items):
        for name, value in item.items():
            k = ids.get(name)
            if k is not None:
                U[t] += value * W[k]
    return U


def compare_with_tagger(model: CRFsuiteModel, path, sequences):
    """(number of sequences with identical tags, max |Δ marginal|, max |Δ log p(tags)|)."""
    tagger = pycrfsuite.Tagger()
    tagger.open(str(path))
    assert list(model.labels) == tagger.labels()
    W = model.state_matrix().toarray()
    ids = model.attribute_ids()
    same, max_marginal, max_logp = 0, 0.0, 0.0
    for xseq in sequences:
        items = pycrfsuite.ItemSequence(xseq).items()
        U = emission_scores(model, W, ids, items)
        best = viterbi(U, model.transitions)
        ours = [model.labels[j] for j in best.structure]
        tagger.set(items)
        theirs = tagger.tag()
        same += ours == theirs
        log_z, node = chain_marginals_batch(U, np.array([0, len(items)]), model.transitions)
        ref = np.array([[tagger.marginal(y, t) for y in model.labels]
                        for t in range(len(items))])
        max_marginal = max(max_marginal, float(np.abs(node - ref).max()))
        log_p = best.score - float(log_z[0])
        max_logp = max(max_logp, abs(log_p - math.log(tagger.probability(theirs))))
    tagger.close()
    return same, max_marginal, max_logp


def tiny_data(seed=0, n=60):
    """Generated sequences with string, real-valued, nested-dict and list attributes."""
    rng = random.Random(seed)
    words = {"N": ["dog", "cat", "idea", "fish"], "V": ["runs", "eats", "sleeps"],
             "D": ["the", "a"], "A": ["big", "green", "odd"]}
    X, Y = [], []
    for _ in range(n):
        tags = ["D"] + (["A"] if rng.random() < 0.5 else []) + ["N", "V"]
        if rng.random() < 0.3:
            tags += ["D", "N"]
        xseq = []
        for i, tag in enumerate(tags):
            w = rng.choice(words[tag])
            item = {"word": w, "len": len(w) / 10, "shape": {"first": w[0], "x": 0.5},
                    "prev": xseq[-1]["word"] if xseq else "<s>"}
            if rng.random() < 0.1:
                item["word"] = "unseen" + str(rng.randrange(5))  # some never seen again
            xseq.append(item)
        X.append(xseq)
        Y.append(tags)
    return X, Y


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    path = tmp_path_factory.mktemp("crfsuite") / "tiny.crfsuite"
    X, Y = tiny_data()
    trainer = pycrfsuite.Trainer(verbose=False)
    for xseq, yseq in zip(X, Y):
        trainer.append(xseq, yseq)
    trainer.append([["bias", "only.list"], ["bias"]], ["D", "N"])  # list items: value 1
    trainer.set_params({"max_iterations": 40, "c1": 0.01, "c2": 0.01})
    trainer.train(str(path))
    return path


# --------------------------------------------------------------------------------------
# what is read
# --------------------------------------------------------------------------------------
def test_tiny_model_matches_pycrfsuite(tiny_model):
    model = read_crfsuite_model(tiny_model)
    assert model.path == str(tiny_model)
    assert model.model_type == "FOMC" and model.version == 100
    _, Y = tiny_data()
    first_seen = tuple(dict.fromkeys(tag for tags in Y for tag in tags))
    assert model.labels == first_seen  # CRFsuite's label ids: order of first appearance
    assert model.transitions.shape == (4, 4) and model.transitions.dtype == np.float64
    assert not model.state_weights.flags.writeable and not model.transitions.flags.writeable
    assert model.n_features == model.state_weights.size + np.count_nonzero(model.transitions)
    # python-crfsuite's attribute names: "key:value" for strings, "key" for numbers,
    # "key:sub" / "key:sub:value" for nested dicts, the string itself for list items
    names = set(model.attributes)
    assert {"word:dog", "len", "shape:first:d", "shape:x", "prev:<s>", "bias"} <= names
    assert len(names) == model.n_attributes

    # every weight, as python-crfsuite's own dump reports it (rounded to 6 decimals)
    tagger = pycrfsuite.Tagger()
    tagger.open(str(tiny_model))
    info = tagger.info()
    tagger.close()
    state = {(model.attributes[a], model.labels[y]): w for a, y, w in
             zip(model.state_attributes, model.state_labels, model.state_weights)}
    assert state.keys() == info.state_features.keys()
    assert max(abs(state[k] - v) for k, v in info.state_features.items()) < 1e-6
    trans = {(model.labels[i], model.labels[j]): model.transitions[i, j]
             for i, j in zip(*np.nonzero(model.transitions))}
    assert trans.keys() == info.transitions.keys()  # [prev, next]
    assert max(abs(trans[k] - v) for k, v in info.transitions.items()) < 1e-6
    W = model.state_matrix()
    assert W.shape == (model.n_attributes, model.n_labels) and W.nnz == len(state)


def test_tiny_model_tags_and_marginals_agree(tiny_model):
    model = read_crfsuite_model(tiny_model)
    X, _ = tiny_data(seed=1, n=80)
    X.append([{"never": "seen"}, {"word": "dog", "len": -3.0}])  # unknown attributes
    same, max_marginal, max_logp = compare_with_tagger(model, tiny_model, X)
    assert same == len(X)
    assert max_marginal < 1e-6 and max_logp < 1e-6


def test_a_model_whose_weights_are_all_zero(tmp_path):
    """Strong L1 leaves no feature: no attributes, zero transitions, every label ties."""
    path = tmp_path / "empty.crfsuite"
    trainer = pycrfsuite.Trainer(verbose=False)
    trainer.append([{"w": "a"}, {"w": "b"}], ["X", "Y"])
    trainer.set_params({"max_iterations": 5, "c1": 1000.0, "c2": 0.0})
    trainer.train(str(path))
    model = read_crfsuite_model(path)
    assert model.labels == ("X", "Y") and model.attributes == () and model.n_features == 0
    assert model.state_weights.size == 0 and not model.transitions.any()
    same, max_marginal, _ = compare_with_tagger(model, path, [[{"w": "a"}, {"w": "b"}]])
    assert same == 1 and max_marginal < 1e-12


def conll_features(sentence):
    out = []
    for i, (w, p) in enumerate(zip(sentence.words, sentence.pos)):
        item = {"word.lower": w.lower(), "postag": p, "bias": 1.0, "len": len(w) / 10,
                "title": float(w[:1].isupper()), "suffix": {w[-2:].lower(): 0.5}}
        item["-1:postag"] = sentence.pos[i - 1] if i else "<s>"
        item["+1:postag"] = sentence.pos[i + 1] if i + 1 < len(sentence.pos) else "</s>"
        out.append(item)
    return out


@pytest.mark.slow
def test_conll2000_model_agrees_with_pycrfsuite_on_1000_sentences(require_data, tmp_path):
    """A chunker that python-crfsuite trained on CoNLL-2000 (first 4,000 sentences of
    train.txt, 50 L-BFGS iterations), read by our reader: identical tags and marginals
    within 1e-6 on 1,000 held-out sentences (the last 1,000 of train.txt)."""
    from latentstruct.data.readers import read_conll2000

    sentences = read_conll2000(require_data("conll2000", "train.txt"))
    train, held_out = sentences[:4000], sentences[-1000:]
    path = tmp_path / "chunker.crfsuite"
    trainer = pycrfsuite.Trainer(verbose=False)
    for s in train:
        trainer.append(conll_features(s), list(s.tags))
    trainer.set_params({"max_iterations": 50, "c1": 0.1, "c2": 0.01})
    trainer.train(str(path))

    model = read_crfsuite_model(path)
    assert model.n_labels > 15 and model.n_attributes > 1000
    same, max_marginal, max_logp = compare_with_tagger(
        model, path, [conll_features(s) for s in held_out])
    assert same == 1000
    assert max_marginal < 1e-6 and max_logp < 1e-6


# --------------------------------------------------------------------------------------
# what is refused
# --------------------------------------------------------------------------------------
def refused(path) -> str:
    with pytest.raises(ModelFormatError) as info:
        read_crfsuite_model(path)
    message = str(info.value)
    assert str(path) in message
    return message


def write(tmp_path, name, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    return path


@pytest.fixture
def good(tiny_model):
    return bytearray(tiny_model.read_bytes())


def offsets(data) -> dict:
    h = HEADER.unpack_from(data, 0)
    return dict(zip(("feat", "labels", "attrs", "lrefs", "arefs"), h[7:]))


def test_foreign_files_are_refused(tmp_path):
    msg = refused(write(tmp_path, "empty.crfsuite", b""))
    assert "expected a file starting with the magic b'lCRF'" in msg and "an empty file" in msg
    png = b"\x89PNG\r\n\x1a\n" + zlib.compress(b"\0" * 64)
    assert "found a PNG image" in refused(write(tmp_path, "x.png", png))
    msg = refused(write(tmp_path, "notes.txt", b"word POS B-NP\nthe DT B-NP\n"))
    assert "found text starting 'word POS B-NP" in msg
    assert "found the bytes 00 01 02" in refused(write(tmp_path, "x.bin", bytes(range(40))))


def test_a_latentstruct_npz_model_is_refused_with_a_pointer(tmp_path):
    from latentstruct.io import save_model

    path = tmp_path / "model.npz"
    save_model(path, {"task": "chunk", "learner": "crf", "task_params": {},
                      "learner_params": {}}, {"coef_": np.zeros(3)})
    msg = refused(path)
    assert "a zip archive" in msg and "latentstruct.load" in msg


def test_missing_file(tmp_path):
    msg = refused(tmp_path / "nope.crfsuite")
    assert "cannot read CRFsuite model file" in msg and "no such file" in msg


@pytest.mark.parametrize("keep", [1, 3, 4, 20, 47, 48, 100, 0.5, -40, -1])
def test_truncated_files(tmp_path, good, keep):
    n = len(good)
    cut = int(n * keep) if isinstance(keep, float) else (keep if keep > 0 else n + keep)
    msg = refused(write(tmp_path, "cut.crfsuite", bytes(good[:cut])))
    assert "truncated" in msg
    if cut >= 48:
        assert f"expected {n:,} bytes (the size in its header), found {cut:,} bytes" in msg


def test_appended_bytes(tmp_path, good):
    msg = refused(write(tmp_path, "long.crfsuite", bytes(good) + b"\0" * 8))
    assert "longer than it says" in msg


def test_file_over_the_size_limit(tmp_path, good, monkeypatch):
    monkeypatch.setenv(MAX_CRFSUITE_BYTES_ENV, "1000")
    msg = refused(write(tmp_path, "big.crfsuite", bytes(good)))
    assert "over 1,000 bytes" in msg and MAX_CRFSUITE_BYTES_ENV in msg


def patched(tmp_path, data, offset, fmt, *values):
    data = bytearray(data)
    struct.pack_into(fmt, data, offset, *values)
    return write(tmp_path, "bad.crfsuite", bytes(data))


def test_bad_header_fields(tmp_path, good):
    msg = refused(patched(tmp_path, good, 8, "4s", b"XXXX"))
    assert "unknown model type: expected b'FOMC' (a first-order CRF), found b'XXXX'" in msg
    assert "unknown format version: expected 100, found 99" in refused(
        patched(tmp_path, good, 12, "<I", 99))
    assert "number of labels out of range" in refused(patched(tmp_path, good, 20, "<I", 0))
    msg = refused(patched(tmp_path, good, 28, "<I", len(good) + 5))
    assert "offset of the FEAT chunk is out of range" in msg
    assert "header's feature count disagrees" in refused(patched(tmp_path, good, 16, "<I", 3))


def test_bad_chunks(tmp_path, good):
    o = offsets(good)
    assert "bad features (FEAT) chunk" in refused(patched(tmp_path, good, o["feat"], "4s", b"TAEF"))
    msg = refused(patched(tmp_path, good, o["labels"], "4s", b"QQQQ"))
    assert "bad label chunk" in msg and "expected the tag b'CQDB', found b'QQQQ'" in msg
    msg = refused(patched(tmp_path, good, o["attrs"] + 12, "<I", 0x71534462))
    assert "byte-order mark" in msg and "big-endian" in msg
    assert "bad label references (LFRF) chunk" in refused(
        patched(tmp_path, good, o["lrefs"], "4s", b"AFRF"))
    msg = refused(patched(tmp_path, good, o["arefs"] + 4, "<I", len(good)))
    assert "attribute references (AFRF) chunk's size does not fit the file" in msg
    msg = refused(patched(tmp_path, good, o["feat"] + 8, "<I", 10 ** 6))
    assert "FEAT chunk's size does not match its feature count" in msg


def test_bad_features(tmp_path, good):
    first = offsets(good)["feat"] + 12
    msg = refused(patched(tmp_path, good, first + 12, "<d", float("nan")))
    assert "feature 0 has a weight that is not finite: expected a finite weight, found nan" in msg
    assert "feature 0 has an unknown type" in refused(patched(tmp_path, good, first, "<I", 7))
    msg = refused(patched(tmp_path, good, first + 8, "<I", 99))
    assert "feature 0 refers to a label id out of range: expected an id below 4, found 99" in msg
    # feature 1 made a copy of feature 0
    dup = bytearray(good)
    dup[first + 20:first + 40] = dup[first:first + 20]
    assert "occurs more than once" in refused(write(tmp_path, "dup.crfsuite", bytes(dup)))


def test_bad_names(tmp_path, good):
    o = offsets(good)
    data = bytes(good)
    at = o["labels"] + data[o["labels"]:].index(b"D\x00")  # the first label's name
    msg = refused(patched(tmp_path, good, at, "B", 0xFF))
    assert "label 0's name is not UTF-8: expected UTF-8 text, found the byte 0xff at byte 1" in msg
    msg = refused(patched(tmp_path, good, at, "B", 0))
    assert "label 0's name contains a NUL byte: expected one NUL, at the end" in msg
    msg = refused(patched(tmp_path, good, at + 1, "B", ord("x")))  # its NUL overwritten
    assert "label 0's name is malformed" in msg
    at_n = o["labels"] + data[o["labels"]:].index(b"N\x00")
    msg = refused(patched(tmp_path, good, at_n, "B", ord("D")))  # two labels named "D"
    assert "the label name 'D' occurs twice" in msg
    msg = refused(patched(tmp_path, good, at - 8, "<i", 3))  # record 0 says id 3
    assert "label record 0 carries another id: expected 0, found 3" in msg
    # a hash table emptied: the count no longer matches the header
    refs = o["labels"] + 24
    first_table = next(k for k in range(256)
                       if struct.unpack_from("<I", data, refs + 8 * k + 4)[0])
    msg = refused(patched(tmp_path, good, refs + 8 * first_table + 4, "<I", 0))
    assert "the label CQDB holds another number of strings than the header says" in msg


def test_bad_references(tmp_path, good):
    o = offsets(good)
    msg = refused(patched(tmp_path, good, o["lrefs"] + 12, "<I", 1))
    assert "label references (LFRF) list 0 is out of range" in msg
    msg = refused(patched(tmp_path, good, o["lrefs"] + 12 + 4 * 4, "<I", 8))
    assert "unused lists are not empty" in msg
    (first_list,) = struct.unpack_from("<I", good, o["arefs"] + 12)
    (m,) = struct.unpack_from("<I", good, first_list)
    assert m >= 1
    msg = refused(patched(tmp_path, good, first_list, "<I", m + 1))
    assert "hold another number of references than there are state features" in msg
    msg = refused(patched(tmp_path, good, first_list + 4, "<I", 10 ** 6))
    assert "list 0 refers to a feature id out of range" in msg


def test_damaged_files_never_raise_anything_else(tmp_path, good):
    """Random byte damage and cuts: the reader either reads a model or raises
    ModelFormatError, never struct.error, IndexError, MemoryError or the like."""
    rng = random.Random(42)
    n = len(good)
    for trial in range(300):
        data = bytearray(good)
        for _ in range(rng.choice((1, 2, 8))):
            k = rng.randrange(n) if rng.random() < 0.5 else rng.randrange(min(n, 200))
            data[k] = rng.randrange(256)
        if trial % 5 == 0:
            cut = rng.randrange(n)
            data = data[:cut]
            data[4:8] = struct.pack("<I", cut)  # a consistent size: the damage is inside
        path = write(tmp_path, f"d{trial}.crfsuite", bytes(data))
        try:
            model = read_crfsuite_model(path)
        except ModelFormatError as exc:
            assert str(path) in str(exc)
        else:
            assert np.isfinite(model.transitions).all()
            assert np.isfinite(model.state_weights).all()
