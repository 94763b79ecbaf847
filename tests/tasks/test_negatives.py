import random
from collections import Counter

import numpy as np
import pytest

from latentstruct.tasks.negatives import shuffled_negatives

POSITIVES = [
    ["A.", "Cau,", "Formalising", "strategy.", "1992."],
    ["Dogs", "bark"],
    ["the", "the", "cat"],
    ["solo"],
    ["a", "a"],
]


def test_layout_multiset_and_difference():
    negs = shuffled_negatives(POSITIVES, 3, random_state=0)
    assert len(negs) == 3 * len(POSITIVES)
    for i, pos in enumerate(POSITIVES):
        for neg in negs[3 * i : 3 * i + 3]:
            assert Counter(neg) == Counter(pos)
            assert len(neg) == len(pos)
            if len(set(pos)) >= 2:
                assert neg != pos
            else:  # one distinct token: the only order is the positive's own
                assert neg == pos
    assert negs[3:6] == [["bark", "Dogs"]] * 3  # the one other order of a 2-token sentence


def test_never_identical_over_many_draws():
    pos = [["x", "y"], ["x", "x", "y"], ["p", "q", "r"]]
    negs = shuffled_negatives(pos, 200, random_state=123)
    for i, p in enumerate(pos):
        block = negs[200 * i : 200 * (i + 1)]
        assert all(n != p for n in block)
    # uniform over the other orders: both non-identical orders of x x y occur
    assert {tuple(n) for n in negs[200:400]} == {("x", "y", "x"), ("y", "x", "x")}
    assert len({tuple(n) for n in negs[400:]}) == 5  # all 3! - 1 other orders of p q r


def test_deterministic_under_seed_and_independent_of_global_rng():
    np.random.seed(1)
    random.seed(1)
    a = shuffled_negatives(POSITIVES, 4, random_state=7)
    np.random.seed(2)
    random.seed(2)
    b = shuffled_negatives(POSITIVES, 4, random_state=7)
    assert a == b
    assert shuffled_negatives(POSITIVES, 4, random_state=8) != a
    # the global generators were not advanced
    state = np.random.get_state()
    py_state = random.getstate()
    shuffled_negatives(POSITIVES, 4, random_state=None)
    assert np.array_equal(np.random.get_state()[1], state[1]) and random.getstate() == py_state


def test_generator_is_used_as_given():
    g1, g2 = np.random.default_rng(5), np.random.default_rng(5)
    first = shuffled_negatives(POSITIVES, 2, g1)
    assert first == shuffled_negatives(POSITIVES, 2, g2)
    assert shuffled_negatives(POSITIVES, 2, g1) == shuffled_negatives(POSITIVES, 2, g2)


def test_inputs_not_modified_and_outputs_are_new_lists():
    pos = [list(p) for p in POSITIVES]
    negs = shuffled_negatives(pos, 2, random_state=0)
    assert pos == POSITIVES
    assert negs[6] == ["solo"]  # an unshufflable sentence comes back as a copy, not an alias
    negs[6].append("extra")
    assert pos == POSITIVES
    tuples = shuffled_negatives([("a", "b", "c")], 1, random_state=0)
    assert isinstance(tuples[0], list) and sorted(tuples[0]) == ["a", "b", "c"]


def test_zero_per_positive_and_no_positives():
    assert shuffled_negatives(POSITIVES, 0, random_state=0) == []
    assert shuffled_negatives([], 3, random_state=0) == []


def test_errors():
    with pytest.raises(ValueError, match="sentence 1 has no tokens"):
        shuffled_negatives([["a", "b"], []], 1, random_state=0)
    with pytest.raises(ValueError, match="single string"):
        shuffled_negatives(["a b c"], 1, random_state=0)
    with pytest.raises(ValueError, match="n_per_positive"):
        shuffled_negatives(POSITIVES, -1, random_state=0)
    with pytest.raises(ValueError, match="n_per_positive"):
        shuffled_negatives(POSITIVES, 1.5, random_state=0)
