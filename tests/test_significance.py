import math

import numpy as np
import pytest

from latentstruct.significance import sign_test


def test_counts_and_exact_p_value():
    a = np.array([1.0, 1.0, 1.0, 0.5, 0.2, 0.3])
    b = np.array([0.0, 0.0, 0.0, 0.5, 0.1, 0.9])
    t = sign_test(a, b)
    assert (t.n_better, t.n_worse, t.n_ties) == (4, 1, 1)
    # two-sided binomial: P(X<=1)+P(X>=4) for n=5 -> (1+5+5+1)/32
    assert t.p_value == pytest.approx(12 / 32)


def test_symmetric_and_all_ties():
    rng = np.random.default_rng(0)
    a, b = rng.random(50), rng.random(50)
    assert sign_test(a, b).p_value == pytest.approx(sign_test(b, a).p_value)
    assert sign_test(a, a).p_value == 1.0


def test_lopsided_split_is_significant():
    t = sign_test(np.ones(20), np.zeros(20))
    assert t.p_value == pytest.approx(2 * 0.5 ** 20)
    assert math.isclose(t.to_json()["p_value"], t.p_value)


def test_shape_mismatch_is_refused():
    with pytest.raises(ValueError, match="equal length"):
        sign_test([1.0, 2.0], [1.0])
