from latentstruct.testing import require_data

import pytest

from latentstruct.data.translit import (
    LANGUAGES,
    check_language,
    cldr_pairs,
    consonant_similarity,
    read_translit_tsv,
    strip_direction_marks,
)
from latentstruct.exceptions import ConfigError, InputError




def write(tmp_path, content, name="pairs.tsv"):
    path = tmp_path / name
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return path


# ------------------------------------------------------------------------- read_translit_tsv
def test_reads_pairs_removes_spaces_marks_and_lowercases(tmp_path):
    path = write(tmp_path, "Kämpfe\tק מ פ ה\t1\nazaz\tע ז ז \u200e \u200e\t1\n"
                           "nino\u200f\tנ י נ ו\t3\n\nfalla\tф а л ь я\t2\n")
    assert read_translit_tsv(path) == [
        ("kämpfe", "קמפה"), ("azaz", "עזז"), ("nino", "נינו"), ("falla", "фалья"),
    ]


def test_strip_direction_marks():
    assert strip_direction_marks("\u200fab\u200ec\u202c\u2067") == "abc"


def error_of(path):
    with pytest.raises(InputError) as info:
        read_translit_tsv(path)
    return info.value


def test_empty_file_has_no_pairs(tmp_path):
    path = write(tmp_path, "")
    err = error_of(path)
    assert "contains no pairs" in str(err) and str(path) in str(err)
    assert "contains no pairs" in str(error_of(write(tmp_path, "\n\n", "blank.tsv")))


@pytest.mark.parametrize("line, got", [
    ("italy\tא י ט ל י ה", 2),
    ("italy\tא י ט ל י ה\t3\textra", 4),
    ("italy א י ט ל י ה 3", 1),
])
def test_wrong_column_count_names_file_and_line(tmp_path, line, got):
    path = write(tmp_path, f"rome\tר ו מ א\t2\n{line}\n")
    err = error_of(path)
    assert err.line == 2 and err.path == str(path)
    assert str(err).startswith(f"{path}:2: ")
    assert "expected 3 TAB-separated columns" in str(err)
    assert f"got {got} column" in str(err)


def test_empty_source_or_target(tmp_path):
    err = error_of(write(tmp_path, "rome\tר ו מ א\t2\n\u200f\tר ו מ א\t2\n"))
    assert err.line == 2 and "empty English word" in str(err)
    err = error_of(write(tmp_path, "rome\t \u200e \t2\n", "t.tsv"))
    assert err.line == 1 and "empty target word" in str(err)


def test_bad_count(tmp_path):
    err = error_of(write(tmp_path, "rome\tר ו מ א\tmany\n"))
    assert err.line == 1 and "non-negative integer" in str(err) and "'many'" in str(err)


def test_non_utf8_file(tmp_path):
    err = error_of(write(tmp_path, b"rome\t\xf8 \xe5\t2\n", "latin.tsv"))
    assert err.line == 1 and "UTF-8" in str(err) and "0xf8" in str(err)


def test_missing_file(tmp_path):
    err = error_of(tmp_path / "nope.tsv")
    assert "nope.tsv" in str(err)


# ------------------------------------------------------------------------------ languages
def test_check_language():
    assert LANGUAGES == ("he", "ru", "ar")
    assert check_language("ru") == "ru"
    with pytest.raises(ConfigError) as info:
        check_language("xx")
    assert str(info.value) == "unknown language code 'xx'; expected one of: ar, he, ru"
    with pytest.raises(ConfigError):
        cldr_pairs("de")


# ---------------------------------------------------------------------------------- CLDR
def test_consonant_similarity():
    assert consonant_similarity("honolulu", "הונולולו") == 1.0
    assert consonant_similarity("bahia", "באהיה") == 1.0
    assert consonant_similarity("kankun", "Канкун") == 1.0
    assert consonant_similarity("egypt", "מצרים") < 0.5   # a translation
    assert consonant_similarity("greece", "יוון") == 0.0


# pairs per CLDR release (Babel 2.18 ships CLDR 47, 2.19 CLDR 49), as cldr_pairs documents
CLDR_COUNTS = {"47": {"he": 574, "ru": 594, "ar": 542}, "49": {"he": 558, "ru": 579, "ar": 523}}


@pytest.mark.parametrize("lang", ["he", "ru", "ar"])
def test_cldr_pairs_counts_and_shape(lang):
    from babel.core import get_cldr_version

    pairs = cldr_pairs(lang)
    known = CLDR_COUNTS.get(str(get_cldr_version()))
    if known is not None:
        assert len(pairs) == known[lang]
    else:  # a newer release: its exact count is not recorded here yet
        assert len(pairs) >= 500
    sources = [s for s, _ in pairs]
    assert sources == sorted(sources) and len(set(sources)) == len(sources)
    for s, t in pairs:
        assert s == s.lower() and t == t.lower()
        assert not any(c.isspace() or c == "-" for c in s + t)
        assert s.isalpha()
    assert cldr_pairs(lang) == pairs  # deterministic


def test_cldr_pairs_content():
    he = dict(cldr_pairs("he"))
    assert len(he) >= 550
    assert he["italy"] == "איטליה"
    assert he["london"] == "לונדון"
    assert he["buenos"] == "בואנוס" and he["aires"] == "איירס"  # word pairs of a two-word name
    for translation in ("egypt", "greece", "switzerland"):   # dropped by the filter
        assert translation not in he
    assert "north" not in he  # North Dakota / דקוטה הצפונית: word order differs
    ru = dict(cldr_pairs("ru"))
    assert ru["moscow"] == "москва"


# ------------------------------------------------------------------------------ real data
def test_real_hebrew_train_file():
    path = require_data("translit", "he", "train.tsv")
    pairs = read_translit_tsv(path)
    assert len(pairs) == 32026
    assert pairs[0] == ("kämpfe", "קמפה")
    assert all(s and t and " " not in t and "\u200e" not in t and "\u200f" not in s
               for s, t in pairs)
