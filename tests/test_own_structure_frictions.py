"""What a new user met writing their own structure (issue 53, item 6), each pinned by a test:
``check_task`` now checks the marginals' format (a plain array passed it, then
``predict_marginals`` crashed on ``.node``), says that an enumeration covering too little is
the enumeration's fault (it blamed the decoder), and LCLR's two-stage start warns in LCLR's
own parameters (it named TwoStage's ``max_iter``, which no LCLR parameter reached)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from latentstruct.learners import LCLR
from latentstruct.tasks import ChainStructure, ChunkTask
from latentstruct.testing import BagTask, check_task, make_bag_problem


class PlainMarginalsChain(ChainStructure):
    """Marginals as a bare (T, L) array: what the user wrote, before the format was checked."""

    def marginals(self, x, w):
        return ChainStructure.marginals(self, x, w).node

    # the chain's own sums read its marginals object: keep them on the real one
    def log_partition(self, x, w):
        return ChainStructure.marginals(self, x, w).log_partition

    def expected_feature(self, x, w):
        return ChainStructure(self.n_labels, self.n_attributes).expected_feature(x, w)


class PlainMarginals(ChunkTask):
    name = "plain-marginals"
    structure_class = PlainMarginalsChain


def test_check_task_refuses_marginals_without_node(tiny_chunk_file):
    task = PlainMarginals(window=0, affix_length=1)
    data = task.read(tiny_chunk_file)
    task.fit(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(AssertionError, match=r"marginals\(x, w\) returned a ndarray; expected "
                                                 r"an object whose .node is the \(positions, "
                                                 r"n_labels\) array.*'marginals-format'"):
            check_task(task, data)
    ok = ChunkTask(window=0, affix_length=1)
    ok.fit(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert "marginals-format" in check_task(ok, data).checks


def test_an_enumeration_that_covers_too_little_is_named_as_such():
    task, X, y = make_bag_problem(n_examples=6, bag_size=3)
    task = BagTask(task.n_features).fit()
    pairs = list(zip(X, y))
    with pytest.raises(AssertionError) as info:  # lists only the first vector of each bag
        check_task(task, pairs, enumerate=lambda x: [0], n_weights=3)
    message = str(info.value)
    assert "the enumeration misses legal structures" in message
    assert "monotone=False" in message and "not a maximum" not in message
    check_task(task, pairs, enumerate=lambda x: range(len(x)), n_weights=3)  # every h: passes


def test_lclr_two_stage_start_warns_in_lclr_parameters():
    task, X, y = make_bag_problem()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        LCLR(task, dcd_max_iter=2).fit(X, y)
    messages = [str(w.message) for w in caught]
    assert any(m.startswith("LCLR's two-stage initialisation: its DCD stopped at "
                            "dcd_max_iter=2 epochs") for m in messages)
    assert not any("TwoStage's DCD stopped at max_iter" in m for m in messages)
    default = LCLR(task, max_iter=3)
    assert default.dcd_max_iter == 2000  # the start uses LCLR's own epochs, not TwoStage's 1000
    assert np.isfinite(default.fit(X, y).coef_).all()
