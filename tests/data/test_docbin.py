"""spaCy ``.spacy`` corpora (DocBin) read as CoNLL-U and CoNLL-2000 records, through the
readers and through ``latentstruct train``/``evaluate`` (issue 56, item 4)."""

from __future__ import annotations

import os
import subprocess
import sys
import zlib

import pytest

from latentstruct.data.readers import read_conll2000, read_conllu
from latentstruct.data.readers.docbin import (
    is_docbin_path,
    read_docbin_chunks,
    read_docbin_conllu,
)
from latentstruct.exceptions import InputError

spacy = pytest.importorskip("spacy", reason="the .spacy reader needs spaCy ([nlp] extra)")
from spacy.tokens import Doc, DocBin, Span  # noqa: E402
from spacy.vocab import Vocab  # noqa: E402


def _save(path, docs):
    DocBin(docs=docs).to_disk(path)
    return path


def _parsed_doc(vocab):
    words = ["The", "cats", "sat", ".", "Dogs", "ran"]
    doc = Doc(vocab, words=words, spaces=[True, True, False, True, True, False],
              pos=["DET", "NOUN", "VERB", "PUNCT", "NOUN", "VERB"],
              tags=["DT", "NNS", "VBD", ".", "NNS", "VBD"],
              lemmas=["the", "cat", "sit", ".", "dog", "run"],
              morphs=["Definite=Def|PronType=Art", "Number=Plur", "", "", "Number=Plur", ""],
              heads=[1, 2, 2, 2, 5, 5], deps=["det", "nsubj", "ROOT", "punct", "nsubj", "ROOT"])
    return doc


def test_suffix_decides():
    assert is_docbin_path("train.spacy") and is_docbin_path("A/B.SPACY")
    assert not is_docbin_path("train.conllu") and not is_docbin_path("spacy")


def test_conllu_records_from_a_parsed_doc(tmp_path):
    path = _save(tmp_path / "p.spacy", [_parsed_doc(Vocab())])
    first, second = read_docbin_conllu(path)  # two sentences, from the parse
    assert first.words == ("The", "cats", "sat", ".")
    assert first.upos == ("DET", "NOUN", "VERB", "PUNCT")
    assert first.xpos == ("DT", "NNS", "VBD", ".")
    assert first.lemmas == ("the", "cat", "sit", ".")
    assert first.heads == (2, 3, 0, 3)
    assert first.deprels == ("det", "nsubj", "root", "punct")
    assert first.feats == ("Definite=Def|PronType=Art", "Number=Plur", "_", "_")
    assert [row[9] for row in first.rows] == ["_", "_", "SpaceAfter=No", "_"]
    assert second.words == ("Dogs", "ran") and second.heads == (2, 0)


def test_unannotated_doc_is_one_sentence_of_underscores(tmp_path):
    path = _save(tmp_path / "w.spacy", [Doc(Vocab(), words=["a", "b", "c"])])
    (sent,) = read_docbin_conllu(path)
    assert sent.words == ("a", "b", "c")
    assert sent.upos == ("_",) * 3 and sent.heads == (-1,) * 3 and sent.feats == ("_",) * 3


def test_feats_in_ud_order(tmp_path):
    # spaCy sorts features case-sensitively (NumForm before Number); UD case-insensitively,
    # as the EWT treebank writes them
    doc = Doc(Vocab(), words=["3"], morphs=["NumForm=Digit|Number=Plur|NumType=Card"])
    (sent,) = read_docbin_conllu(_save(tmp_path / "f.spacy", [doc]))
    assert sent.feats == ("Number=Plur|NumForm=Digit|NumType=Card",)


def _chunk_doc(vocab, *, as_spans):
    words = ["He", "reckons", "the", "deficit", "."]
    doc = Doc(vocab, words=words, tags=["PRP", "VBZ", "DT", "NN", "."])
    chunks = [Span(doc, 0, 1, "NP"), Span(doc, 1, 2, "VP"), Span(doc, 2, 4, "NP")]
    if as_spans:
        doc.spans["chunks"] = chunks
    else:
        doc.ents = chunks
    return doc


@pytest.mark.parametrize("as_spans", [True, False])
def test_chunk_records(tmp_path, as_spans):
    path = _save(tmp_path / "c.spacy", [_chunk_doc(Vocab(), as_spans=as_spans)])
    (sent,) = read_docbin_chunks(path, need_tags=True)
    assert sent.words == ("He", "reckons", "the", "deficit", ".")
    assert sent.pos == ("PRP", "VBZ", "DT", "NN", ".")
    assert sent.tags == ("B-NP", "B-VP", "B-NP", "I-NP", "O")


def test_missing_entity_tags_are_unknown(tmp_path):
    doc = Doc(Vocab(), words=["a", "b", "c"], tags=["DT", "NN", "NN"],
              ents=["B-NP", "I-NP", ""])  # the last token's tag is missing, not O
    (sent,) = read_docbin_chunks(_save(tmp_path / "m.spacy", [doc]), need_tags=True)
    assert sent.tags == ("B-NP", "I-NP", "_")


def test_chunks_need_tags_for_training_only(tmp_path):
    doc = Doc(Vocab(), words=["a", "b"], tags=["DT", "NN"])
    path = _save(tmp_path / "n.spacy", [doc])
    with pytest.raises(InputError, match=r"doc 1 has no chunks.*spacy convert FILE DIR -c ner"):
        read_docbin_chunks(path, need_tags=True)
    (sent,) = read_docbin_chunks(path, need_tags=False)
    assert sent.tags == ("_", "_")


def test_chunks_need_pos(tmp_path):
    doc = Doc(Vocab(), words=["a", "b"], tags=["DT", ""], ents=["B-NP", "I-NP"])
    with pytest.raises(InputError, match=r"doc 1, sentence 1, token 2 \('b'\) has no POS tag"):
        read_docbin_chunks(_save(tmp_path / "p.spacy", [doc]), need_tags=True)


def test_non_ud_pos_is_located(tmp_path):
    doc = Doc(Vocab(), words=["a", "b"], pos=["DET", "NOUN"])
    doc[1].pos_ = "EOL"  # one of spaCy's POS symbols that UD lacks
    with pytest.raises(InputError, match=r"doc 1, sentence 1, token 2 \('b'\) has token.pos_ 'EOL'"):
        read_docbin_conllu(_save(tmp_path / "eol.spacy", [doc]))


def test_whitespace_token_refused(tmp_path):
    doc = Doc(Vocab(), words=["a", "\n", "b"])
    with pytest.raises(InputError, match=r"doc 1, sentence 1, token 2 is '\\n'"):
        read_docbin_conllu(_save(tmp_path / "s.spacy", [doc]))


@pytest.mark.parametrize("content, message", [
    (b"hello", "is not a spaCy DocBin .its bytes are not zlib data"),
    (zlib.compress(b"not msgpack at all"), "is not a readable spaCy DocBin"),
    (b"", "is not a readable spaCy DocBin"),
])
def test_malformed_files_are_one_input_error(tmp_path, content, message):
    path = tmp_path / "bad.spacy"
    path.write_bytes(content)
    with pytest.raises(InputError, match=message) as info:
        read_docbin_conllu(path)
    assert str(path) in str(info.value)


def test_truncated_file(tmp_path):
    path = _save(tmp_path / "t.spacy", [_parsed_doc(Vocab())])
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match="is not a readable spaCy DocBin"):
        read_docbin_conllu(path)


def test_inflation_limit(tmp_path, monkeypatch):
    from latentstruct.data.readers import docbin

    path = _save(tmp_path / "big.spacy", [_parsed_doc(Vocab())])
    inflated = len(zlib.decompress(path.read_bytes()))
    monkeypatch.setattr(docbin, "MAX_DOCBIN_BYTES", inflated - 1)
    with pytest.raises(InputError, match="inflates past the limit"):
        read_docbin_conllu(path)
    monkeypatch.setattr(docbin, "MAX_DOCBIN_BYTES", inflated)
    assert len(read_docbin_conllu(path)) == 2


def test_directory_and_empty_bin(tmp_path):
    (tmp_path / "d.spacy").mkdir()
    with pytest.raises(InputError, match="is a directory"):
        read_docbin_conllu(tmp_path / "d.spacy")
    with pytest.raises(InputError, match="holds no sentences"):
        read_docbin_conllu(_save(tmp_path / "e.spacy", []))


def _convert(src, out_dir, *args):
    subprocess.run([sys.executable, "-m", "spacy", "convert", str(src), str(out_dir), *args],
                   check=True, capture_output=True)
    return out_dir / (src.stem + ".spacy")


def test_spacy_convert_of_ewt_reads_as_the_conllu(tmp_path, require_data):
    conllu = require_data("ud_english_ewt", "en_ewt-ud-dev.conllu")
    converted = _convert(conllu, tmp_path, "-n", "10")
    ours, theirs = read_docbin_conllu(converted), read_conllu(conllu)
    assert len(ours) == len(theirs) == 2001
    for a, b in zip(ours, theirs):
        assert (a.words, a.upos, a.xpos, a.lemmas, a.feats, a.heads, a.deprels) == \
            (b.words, b.upos, b.xpos, b.lemmas, b.feats, b.heads, b.deprels)


def test_spacy_convert_of_conll2000_reads_as_the_text(tmp_path, require_data):
    lines = require_data("conll2000", "train.txt").read_text().splitlines()[:3000]
    src = tmp_path / "c2k.txt"
    src.write_text("\n".join(lines) + "\n")
    converted = _convert(src, tmp_path, "-c", "ner", "-n", "10")
    ours, theirs = read_docbin_chunks(converted, need_tags=True), read_conll2000(src)
    assert len(ours) == len(theirs) > 100
    assert [(s.words, s.pos, s.tags) for s in ours] == [(s.words, s.pos, s.tags) for s in theirs]


def test_cli_trains_and_evaluates_from_spacy_files(tmp_path, require_data):
    lines = require_data("conll2000", "train.txt").read_text().splitlines()[:3000]
    src = tmp_path / "c2k.txt"
    src.write_text("\n".join(lines) + "\n")
    converted = _convert(src, tmp_path, "-c", "ner", "-n", "10")
    env = dict(os.environ)
    run = [sys.executable, "-m", "latentstruct"]
    for train, model in ((converted, "from_bin.npz"), (src, "from_text.npz")):
        subprocess.run(run + ["train", "chunk", "--train", str(train), "--model",
                              str(tmp_path / model)], check=True, capture_output=True, env=env)
    scores = [subprocess.run(run + ["evaluate", "--model", str(tmp_path / m), "--test", str(test)],
                             check=True, capture_output=True, text=True, env=env).stdout
              for m in ("from_bin.npz", "from_text.npz") for test in (converted, src)]
    assert len(set(scores)) == 1  # the same model, scored the same on either file
    bad = subprocess.run(run + ["train", "pos", "--train", str(tmp_path / "missing.spacy"),
                                "--model", str(tmp_path / "x.npz")], capture_output=True,
                         text=True, env=env)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1
    assert "missing.spacy" in bad.stderr


def test_predict_refuses_a_spacy_output_before_reading_anything(tmp_path):
    model, data = tmp_path / "m.npz", tmp_path / "in.spacy"
    model.write_bytes(b"not read")
    data.write_bytes(b"not read either")
    proc = subprocess.run([sys.executable, "-m", "latentstruct", "predict", "--model", str(model),
                           "--input", str(data), "--output", str(tmp_path / "out.spacy")],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "not as a spaCy DocBin" in proc.stderr
    assert not (tmp_path / "out.spacy").exists()
