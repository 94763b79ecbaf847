import gzip
from pathlib import Path

import pytest

from latentstruct.data import wordnet as wordnet_module
from latentstruct.data.wordnet import WordNet, lexnames_text, wordnet_pos
from latentstruct.exceptions import ConfigError


@pytest.fixture
def wn(require_wordnet):
    """The system WordNet (tests/conftest.py: skipped when absent, a failure under CI=true)."""
    return require_wordnet


# ------------------------------------------------------------------------------ similarity
@pytest.mark.slow
def test_synonyms_and_same_lemma_score_one(wn):
    assert wn.similarity("car", "NOUN", "automobile", "NOUN") == 1.0
    assert wn.similarity("buy", "VERB", "purchase", "VERB") == 1.0
    assert wn.similarity("went", "VERB", "go", "VERB") == 1.0  # morphology
    assert wn.similarity("dogs", "NOUN", "dog", "NOUN") == 1.0
    assert wn.similarity("the", "DET", "The", "DET") == 1.0  # outside WordNet: exact match
    assert wn.similarity("the", "DET", "a", "DET") == 0.0


@pytest.mark.slow
def test_hypernyms_score_high_and_decay_with_distance(wn):
    dog_animal = wn.similarity("dog", "NOUN", "animal", "NOUN")
    assert dog_animal == pytest.approx(wn.decay**2)  # dog -> domestic animal -> animal
    assert 0.5 < dog_animal < 1.0
    assert wn.similarity("house", "NOUN", "building", "NOUN") == pytest.approx(wn.decay)
    assert wn.similarity("walk", "VERB", "go", "VERB") == pytest.approx(wn.decay)
    dog_cat = wn.similarity("dog", "NOUN", "cat", "NOUN")
    assert 0 < dog_cat < dog_animal  # siblings under carnivore: a longer path
    assert wn.similarity("animal", "NOUN", "dog", "NOUN") == dog_animal  # symmetric


def test_unrelated_words_score_low(wn):
    assert wn.similarity("dog", "NOUN", "idea", "NOUN") < 0.1
    assert wn.similarity("car", "NOUN", "banana", "NOUN") < 0.1
    assert wn.similarity("dog", "NOUN", "qwzxv", "NOUN") == 0.0  # not in WordNet


def test_antonyms_score_zero_and_are_detected(wn):
    assert wn.is_antonym("good", "ADJ", "bad", "ADJ")
    assert wn.is_antonym("bad", "ADJ", "good", "ADJ")
    assert wn.is_antonym("win", "VERB", "lose", "VERB")
    assert wn.similarity("good", "ADJ", "bad", "ADJ") == 0.0
    assert not wn.is_antonym("good", "ADJ", "good", "ADJ")
    assert not wn.is_antonym("car", "NOUN", "automobile", "NOUN")
    assert not wn.is_antonym("good", "ADJ", "bad", "NOUN")


def test_cross_pos_related_forms(wn):
    assert wn.is_related_form("destroy", "VERB", "destruction", "NOUN")
    assert wn.similarity("destroy", "VERB", "destruction", "NOUN") == pytest.approx(wn.decay)
    assert wn.similarity("destroy", "VERB", "banana", "NOUN") == 0.0


def test_scores_are_in_unit_interval_and_memoised(wn):
    words = [("dog", "NOUN"), ("run", "VERB"), ("quick", "ADJ"), ("quickly", "ADV"),
             ("Paris", "PROPN"), ("city", "NOUN"), ("of", "ADP")]
    for w1, p1 in words:
        for w2, p2 in words:
            s = wn.similarity(w1, p1, w2, p2)
            assert 0.0 <= s <= 1.0
            assert wn.similarity(w2, p2, w1, p1) == s
    n = len(wn._sim)
    wn.similarity("dog", "NOUN", "city", "NOUN")
    assert len(wn._sim) == n


def test_pos_mapping_and_unknown_pos():
    assert wordnet_pos("PROPN") == "n" and wordnet_pos("AUX") == "v" and wordnet_pos("s") == "a"
    assert wordnet_pos("DET") is None
    with pytest.raises(ConfigError, match="unknown POS 'NN'"):
        wordnet_pos("NN")


def test_parameter_validation():  # validated before the dictionary is looked up
    with pytest.raises(ConfigError, match="decay"):
        WordNet(decay=1.5)
    with pytest.raises(ConfigError, match="max_distance"):
        WordNet(max_distance=-1)


# ------------------------------------------------------------------------------ setup
def test_missing_dictionary_names_the_apt_packages(tmp_path, monkeypatch):
    with pytest.raises(ConfigError) as info:
        WordNet(dict_dir=tmp_path / "nowhere")
    message = str(info.value)
    assert "wordnet-base wordnet-sense-index" in message and "apt-get install" in message
    (tmp_path / "index.noun").write_text("")
    monkeypatch.setenv("WNSEARCHDIR", str(tmp_path))
    with pytest.raises(ConfigError, match="lacks .*data.noun"):
        WordNet()


def test_bundled_lexnames_table(wn):
    rows = [line.split("\t") for line in lexnames_text().splitlines()]
    assert len(rows) == 45
    assert rows[0] == ["00", "adj.all", "3"] and rows[44] == ["44", "adj.ppl", "3"]
    category = {"adj": "3", "adv": "4", "noun": "1", "verb": "2"}
    for i, (num, name, cat) in enumerate(rows):
        assert int(num) == i and category[name.split(".")[0]] == cat
    # every lexicographer file number used in the data files names a file of that POS
    numbers = {i: name for i, (_, name, _) in enumerate(rows)}
    for pos, prefix in (("noun", "noun."), ("verb", "verb."), ("adv", "adv."), ("adj", "adj.")):
        used = set()
        with open(wn.path / f"data.{pos}", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if not line.startswith(" "):
                    used.add(int(line.split(" ", 2)[1]))
        assert used and all(numbers[n].startswith(prefix) for n in used)
    assert wn.reader.synset("dog.n.01").lexname() == "noun.animal"


def test_lexnames_table_matches_the_wordnet_manual():
    man = Path("/usr/share/man/man5/lexnames.5WN.gz")
    if not man.exists():
        pytest.skip("lexnames(5WN) manual page not installed")
    text = gzip.decompress(man.read_bytes()).decode("utf-8", "replace")
    from_man = [
        tuple(part.strip() for part in line.split("\t")[:2])
        for line in text.splitlines()
        if len(line) > 3 and line[:2].isdigit() and line[2] == "\t"
    ]
    bundled = [tuple(line.split("\t")[:2]) for line in lexnames_text().splitlines()]
    assert from_man == bundled


def test_missing_nltk_is_a_config_error(monkeypatch, tmp_path):
    import builtins

    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name.startswith("nltk"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    with pytest.raises(ConfigError, match='pip install "nltk>=3.8"'):
        wordnet_module._open_reader(tmp_path)


# ------------------------------------------------------------------------------ supersenses
def test_supersenses_in_wordnet_sense_order(wn):
    # Koo & Collins (2005, §4.1): "shares has the supersenses noun.possession, noun.act and
    # noun.artifact"; "in does not have any WordNet supersenses"
    assert wn.supersenses("shares", "NOUN") == ("noun.possession", "noun.act", "noun.artifact")
    assert wn.supersenses("share", "n") == wn.supersenses("shares", "NOUN")  # base form
    assert wn.supersenses("bought", "VERB") == ("verb.possession", "verb.stative", "verb.cognition")
    assert wn.supersenses("in", "ADP") == ()
    assert wn.supersenses("the", "DET") == ()
    assert wn.supersenses("xyzzyqq", "NOUN") == ()
    assert wn.supersenses("heavy", "ADJ") == ("adj.all",)
    names = {line.split("\t")[1] for line in lexnames_text().splitlines() if line.strip()}
    assert set(wn.supersenses("bank", "NOUN")) <= names
    assert wn.supersenses("bank", "NOUN")[0] == "noun.object"  # sloping land, the first sense
    with pytest.raises(ConfigError, match="unknown POS"):
        wn.supersenses("dog", "NN")
