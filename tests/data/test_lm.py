"""Interpolated Kneser-Ney trigram model: exact probabilities, sampling, saving, input errors."""

import math
from collections import Counter

import numpy as np
import pytest

from latentstruct.data.lm import BOS, EOS, UNK, TrigramLM
from latentstruct.data.sentences import read_sentences, tokenize
from latentstruct.exceptions import ConfigError, InputError, ModelFormatError, NotFittedError

TINY = [["a", "b"], ["a", "c"], ["b", "c"]]
CORPUS = [
    "the cat sat on the mat .",
    "the dog sat on the log .",
    "a cat saw the dog .",
    "the cat ran .",
    "dogs and cats ran on the mat .",
]


def reference_kn(sentences, d):
    """Interpolated Kneser-Ney from its definition, with dictionaries (no shared code)."""
    tri = Counter()
    for s in sentences:
        padded = [BOS, BOS] + list(s) + [EOS]
        for i in range(2, len(padded)):
            tri[tuple(padded[i - 2:i + 1])] += 1
    words = sorted({w for s in sentences for w in s})
    predictable = words + [EOS, UNK]
    cont2 = Counter((v, w) for (_, v, w) in tri)  # N(. v w)
    cont1 = Counter(w for (_, w) in cont2)  # N(. w)
    total1 = sum(cont1.values())

    def p1(w):
        return max(cont1[w] - d, 0) / total1 + d * len(cont1) / total1 / len(predictable)

    def p2(w, v):
        row = {x: n for (y, x), n in cont2.items() if y == v}
        if not row:
            return p1(w)
        tot = sum(row.values())
        return max(row.get(w, 0) - d, 0) / tot + d * len(row) / tot * p1(w)

    def p3(w, u, v):
        row = {x: c for (a, b, x), c in tri.items() if (a, b) == (u, v)}
        if not row:
            return p2(w, v)
        tot = sum(row.values())
        return max(row.get(w, 0) - d, 0) / tot + d * len(row) / tot * p2(w, v)

    return p3, predictable


@pytest.fixture(scope="module")
def small_lm():
    return TrigramLM().fit([tokenize(s) for s in CORPUS])


# ------------------------------------------------------------------------------------
# probabilities
# ------------------------------------------------------------------------------------
@pytest.mark.parametrize("d", [0.75, 0.5, 1.0])
@pytest.mark.parametrize("corpus", ["tiny", "small"])
def test_probabilities_match_the_definition_and_sum_to_one(d, corpus):
    sentences = TINY if corpus == "tiny" else [tokenize(s) for s in CORPUS]
    lm = TrigramLM(discount=d).fit(sentences)
    p3, predictable = reference_kn(sentences, d)
    assert sorted(lm.vocabulary_) == sorted(predictable + [BOS])
    contexts = [BOS] + predictable[:-2] + ["never-seen"]  # </s> never is a context
    for u in contexts:
        for v in contexts:
            if v == BOS and u != BOS:
                continue  # <s> only ever follows <s>
            probs = lm.next_word_probs([u, v])
            assert probs.sum() == pytest.approx(1.0, abs=1e-12)
            assert probs[lm.vocabulary_.index(BOS)] == 0.0
            for w in predictable:
                ref = p3(w, u if u != "never-seen" else UNK, v if v != "never-seen" else UNK)
                assert lm.prob(w, [u, v]) == pytest.approx(ref, rel=1e-12)
                assert probs[lm.vocabulary_.index(w)] == pytest.approx(ref, rel=1e-12)


def test_hand_computed_values_and_back_off_for_an_unseen_trigram():
    # TINY with D = 0.5.  Continuation counts N(. w): a 1, b 2, c 2, </s> 2 (total 7,
    # 4 types); |V| = 5 predictable words (a, b, c, </s>, <unk>).
    lm = TrigramLM(discount=0.5).fit(TINY)
    p1 = {"a": 0.9 / 7, "b": 1.9 / 7, "c": 1.9 / 7, EOS: 1.9 / 7, UNK: 0.4 / 7}
    for w, p in p1.items():  # context (<unk>, <unk>) is unseen at every order: P = P1
        assert lm.prob(w, ["zz", "qq"]) == pytest.approx(p, rel=1e-12)
    # bigram context b: N(. b c) = N(. b </s>) = 1, so P2(c | b) = 0.5/2 + 0.5 * 2/2 * P1(c)
    p2_c_b = 0.25 + 0.5 * p1["c"]
    assert lm.prob("c", ["zz", "b"]) == pytest.approx(p2_c_b, rel=1e-12)
    # the trigram (a, b, c) is unseen; context (a, b) was seen once (followed by </s>):
    # P3(c | a b) = 0 + D * 1/1 * P2(c | b)
    assert lm.prob("c", ["a", "b"]) == pytest.approx(0.5 * p2_c_b, rel=1e-12)
    assert lm.prob(EOS, ["a", "b"]) == pytest.approx(0.5 + 0.5 * (0.25 + 0.5 * p1[EOS]))
    # the start context (<s>, <s>) saw a twice and b once
    p2_a_bos = 0.5 / 2 + 0.5 * 2 / 2 * p1["a"]  # N(. <s> a) = N(. <s> b) = 1
    assert lm.prob("a", []) == pytest.approx((2 - 0.5) / 3 + 0.5 * 2 / 3 * p2_a_bos)


def test_kneser_ney_uses_continuation_counts():
    # "francisco" and "glasses" are equally frequent, but "francisco" only ever follows
    # "san": in a new context KN must prefer "glasses".
    sents = [["san", "francisco"]] * 5 + [[w, "glasses"] for w in "abcde"]
    lm = TrigramLM().fit(sents)
    assert lm.prob("glasses", ["x", "y"]) > 3 * lm.prob("francisco", ["x", "y"])
    # after "san" the seen continuation dominates: (5 - D)/5 + D/5 * P2(francisco | san)
    assert lm.prob("francisco", ["san"]) == pytest.approx(
        4.25 / 5 + 0.75 / 5 * lm.prob("francisco", ["x", "san"]))
    assert lm.prob("francisco", ["san"]) > 0.85
    # a larger discount moves more mass to the lower order
    strong = TrigramLM(discount=1.0).fit(sents)
    assert strong.prob("glasses", ["san"]) > lm.prob("glasses", ["san"])


def test_logprob_sums_next_word_log_probabilities_and_handles_unknown_words(small_lm):
    sent = ["the", "cat", "sat", "."]
    expected = sum(
        math.log(small_lm.prob(w, ctx))
        for w, ctx in [("the", []), ("cat", ["the"]), ("sat", ["the", "cat"]),
                       (".", ["cat", "sat"]), (EOS, ["sat", "."])]
    )
    assert small_lm.logprob(sent) == pytest.approx(expected, rel=1e-12)
    unseen = small_lm.logprob(["the", "zebra", "sat", "."])
    assert math.isfinite(unseen)
    assert unseen < small_lm.logprob(sent)
    assert small_lm.prob("zebra", ["the"]) == small_lm.prob(UNK, ["the"]) > 0
    assert small_lm.logprob(["qwerty"]) == pytest.approx(
        math.log(small_lm.prob(UNK, [])) + math.log(small_lm.prob(EOS, ["qwerty"])))


def test_min_count_maps_rare_words_to_unk():
    lm = TrigramLM(min_count=2).fit([["a", "b"], ["a", "c"]])
    assert lm.vocabulary_ == [BOS, EOS, UNK, "a"]
    assert lm.prob("b", ["a"]) == lm.prob("c", ["a"]) == lm.prob(UNK, ["a"])
    assert lm.prob(UNK, ["a"]) > 0.5  # <unk> was seen twice after a
    assert lm.next_word_probs(["a"]).sum() == pytest.approx(1.0)


# ------------------------------------------------------------------------------------
# sampling
# ------------------------------------------------------------------------------------
def test_sampling_is_reproducible_and_depends_on_the_seed(small_lm):
    first = small_lm.sample(30, random_state=7)
    assert small_lm.sample(30, random_state=7) == first
    assert small_lm.sample(30, random_state=np.random.default_rng(7)) == first
    assert small_lm.sample(30, random_state=8) != first
    state = np.random.get_state()
    small_lm.sample(5, random_state=1)
    assert np.array_equal(np.random.get_state()[1], state[1])  # global RNG untouched
    assert small_lm.sample(0, random_state=0) == []


def test_samples_are_non_empty_finished_sentences(small_lm):
    vocab = set(small_lm.vocabulary_) - {BOS, EOS, UNK}
    samples = small_lm.sample(300, random_state=3, max_len=6)
    assert len(samples) == 300
    for s in samples:
        assert 1 <= len(s) <= 6
        assert set(s) <= vocab
        assert math.isfinite(small_lm.logprob(s))
    # all training sentences end with "."; </s> follows anything else only by backing off
    assert sum(s[-1] == "." for s in samples) > 200
    # samples follow the model: first words are drawn from P(. | <s> <s>)
    firsts = Counter(s[0] for s in small_lm.sample(2000, random_state=4))
    assert firsts.most_common(1)[0][0] == "the"


@pytest.mark.slow
def test_sample_frequencies_follow_the_model():
    lm = TrigramLM().fit(TINY)
    samples = lm.sample(10000, random_state=0, max_len=1)  # one word, then </s>
    counts = Counter(s[0] for s in samples)
    # P(w | <s> <s>) P(</s> | <s> w), renormalised over w != <unk>
    weights = {w: lm.prob(w, []) * lm.prob(EOS, [w]) for w in ("a", "b", "c")}
    z = sum(weights.values())
    for w, p in weights.items():
        assert counts[w] / 10000 == pytest.approx(p / z, abs=0.02)


def test_sample_validation(small_lm):
    with pytest.raises(ConfigError, match="max_len"):
        small_lm.sample(1, random_state=0, max_len=0)
    with pytest.raises(ConfigError, match="n must be"):
        small_lm.sample(-1, random_state=0)
    with pytest.raises(ConfigError, match="random_state"):
        small_lm.sample(1, random_state="seed")
    only_unk = TrigramLM(min_count=5).fit([["a", "b"]])
    with pytest.raises(ConfigError, match="lower min_count"):
        only_unk.sample(1, random_state=0)


# ------------------------------------------------------------------------------------
# saving
# ------------------------------------------------------------------------------------
def test_to_arrays_round_trip_gives_identical_model(small_lm, tmp_path):
    arrays = small_lm.to_arrays(prefix="lm/")
    assert all(a.dtype != object for a in arrays.values())
    path = tmp_path / "lm.npz"
    np.savez(path, **arrays)
    with np.load(path, allow_pickle=False) as loaded:
        restored = TrigramLM.from_arrays(dict(loaded), prefix="lm/")
    assert restored.vocabulary_ == small_lm.vocabulary_
    assert restored.discount == small_lm.discount
    assert restored.n_sentences_ == 5 and restored.n_tokens_ == small_lm.n_tokens_
    assert restored.sample(50, random_state=11) == small_lm.sample(50, random_state=11)
    for ctx in ([], ["the"], ["the", "cat"], ["x", "y"]):
        assert np.array_equal(restored.next_word_probs(ctx), small_lm.next_word_probs(ctx))


def test_vocabulary_with_unusual_strings_round_trips():
    words = ["naïve", "tab\there", "日本", "x y", "a\nb", "\ud800"]  # lone surrogate too
    lm = TrigramLM().fit([words])
    again = TrigramLM.from_arrays(lm.to_arrays())
    assert again.vocabulary_ == lm.vocabulary_
    assert again.logprob(words) == lm.logprob(words)


def test_from_arrays_rejects_damaged_arrays(small_lm):
    arrays = small_lm.to_arrays()
    with pytest.raises(ModelFormatError, match="missing"):
        TrigramLM.from_arrays({k: v for k, v in arrays.items() if k != "tri_w"})
    bad = dict(arrays, tri_w=arrays["tri_w"][::-1].copy())
    with pytest.raises(ModelFormatError, match="sorted"):
        TrigramLM.from_arrays(bad)
    bad = dict(arrays, tri_count=np.zeros_like(arrays["tri_count"]))
    with pytest.raises(ModelFormatError, match="out-of-range"):
        TrigramLM.from_arrays(bad)
    bad = dict(arrays, format_version=np.array(99))
    with pytest.raises(ModelFormatError, match="version 99"):
        TrigramLM.from_arrays(bad)
    bad = dict(arrays, kind=np.array("hashing"))
    with pytest.raises(ModelFormatError, match="expected a 'trigram_kn'"):
        TrigramLM.from_arrays(bad)


# ------------------------------------------------------------------------------------
# input errors, tokenizer, corpus files
# ------------------------------------------------------------------------------------
def test_fit_and_query_validation():
    with pytest.raises(NotFittedError):
        TrigramLM().sample(1, random_state=0)
    with pytest.raises(NotFittedError):
        TrigramLM().logprob(["a"])
    with pytest.raises(InputError, match="no sentences"):
        TrigramLM().fit([])
    with pytest.raises(InputError, match="training sentence 1 is empty"):
        TrigramLM().fit([["a"], []])
    with pytest.raises(InputError, match="reserved symbol '</s>'"):
        TrigramLM().fit([["a", EOS]])
    with pytest.raises(InputError, match="is a string"):
        TrigramLM().fit(["a b c"])
    with pytest.raises(InputError, match="token 1 is 3"):
        TrigramLM().fit([["a", 3]])
    with pytest.raises(ConfigError, match="'discount' parameter"):
        TrigramLM(discount=1.5).fit(TINY)
    with pytest.raises(ConfigError, match="'discount' parameter"):
        TrigramLM(discount=0).fit(TINY)
    with pytest.raises(ConfigError, match="'min_count' parameter"):
        TrigramLM(min_count=0).fit(TINY)
    lm = TrigramLM().fit(TINY)
    with pytest.raises(InputError, match="the sentence is empty"):
        lm.logprob([])
    with pytest.raises(InputError, match="never predicted"):
        lm.prob(BOS, [])
    with pytest.raises(InputError, match="cannot occur in a context"):
        lm.prob("a", [EOS])


def test_fit_does_not_modify_its_input_and_params_stay_unchanged():
    sents = [["a", "b"], ["b"]]
    copy = [list(s) for s in sents]
    lm = TrigramLM(discount=0.5)
    assert lm.fit(sents) is lm
    assert sents == copy and lm.discount == 0.5 and lm.min_count == 1


def test_tokenize():
    assert tokenize("Exports rose 5.93 pct to 155,221 bags in the U.S. (mid-1987).") == [
        "Exports", "rose", "5.93", "pct", "to", "155,221", "bags", "in", "the", "U.S.", "(",
        "mid-1987", ")", "."]
    assert tokenize('He said: "It\'s 10:30, isn\'t it?"') == [
        "He", "said", ":", '"', "It's", "10:30", ",", "isn't", "it", "?", '"']
    assert tokenize("the 1980s cost $4 billion!") == [
        "the", "1980s", "cost", "$", "4", "billion", "!"]
    assert tokenize("   ") == []


def test_read_sentences(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text("The cat sat.\nPrices rose 2.5 pct.\n", encoding="utf-8")
    assert read_sentences(path) == [["The", "cat", "sat", "."],
                                    ["Prices", "rose", "2.5", "pct", "."]]
    path.write_text("", encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_sentences(path)
    assert str(info.value) == f"{path}: contains no sentences; expected a UTF-8 text file " \
                              f"with one sentence per line"
    path.write_text("One sentence.\n\nAnother.\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"c\.txt:2: empty sentence") as info:
        read_sentences(path)
    assert info.value.line == 2
    path.write_bytes(b"Fine.\nCaf\xe9 noir.\n")
    with pytest.raises(InputError, match=r"c\.txt:2: invalid UTF-8"):
        read_sentences(path)
    with pytest.raises(InputError, match="no such file"):
        read_sentences(tmp_path / "missing.txt")


# ------------------------------------------------------------------------------------
# real data
# ------------------------------------------------------------------------------------
@pytest.mark.slow
def test_reuters_sentences(require_data):
    sentences = read_sentences(
        require_data("english_sentences", "reuters21578_sentences.txt"))
    assert len(sentences) == 71267
    lm = TrigramLM().fit(sentences)
    assert lm.n_sentences_ == 71267
    for ctx in ([], ["the"], ["mln", "dlrs"], ["said", "it"], ["unseen-word", "zz"]):
        assert lm.next_word_probs(ctx).sum() == pytest.approx(1.0, abs=1e-9)
    samples = lm.sample(1000, random_state=0)
    assert len(samples) == 1000 and all(1 <= len(s) <= 60 for s in samples)
    assert lm.sample(1000, random_state=0) == samples
    assert lm.sample(1000, random_state=1) != samples
    vocab = set(lm.vocabulary_) - {BOS, EOS, UNK}
    assert all(set(s) <= vocab for s in samples)
    # every training sentence ends in . ! ? (maybe before a quote or parenthesis), and
    # </s> is almost only seen after those, so sampled sentences end the same way
    ends = sum(s[-1] in {".", "!", "?", '"', ")"} for s in samples)
    assert ends > 950
    assert all(math.isfinite(lm.logprob(s)) for s in samples[:100])
