"""Progress bars for slow phases: switched on by the caller, never changing a result."""

import numpy as np

from latentstruct.data.progress import (bar_disable, progress_bar, progress_enabled,
                                        show_progress, track)
from latentstruct.parallel import parallel_chunks


def test_switch_is_scoped():
    assert not progress_enabled()
    with show_progress():
        assert progress_enabled()
        with show_progress(False):
            assert not progress_enabled()
        assert progress_enabled()
    assert not progress_enabled()


def test_track_yields_every_item_with_and_without_bars(capsys):
    items = list(range(37))
    assert list(track(items, "x")) == items
    with show_progress():
        assert list(track(items, "x", delay=0)) == items
        with progress_bar(5, "y", delay=0) as bar:
            bar.update(5)
    assert "x" in capsys.readouterr().err  # tqdm drew on stderr


def test_parallel_chunks_same_result_with_bars_on():
    calls = []

    def fn(a, b):
        calls.append((a, b))
        return [k * k for k in range(a, b)]

    plain = parallel_chunks(fn, 230, 1)
    assert calls == [(0, 230)]
    calls.clear()
    with show_progress():
        shown = parallel_chunks(fn, 230, 1)
        threaded = parallel_chunks(fn, 230, 2)
    assert shown == plain == threaded == [k * k for k in range(230)]
    # with bars on, a pass is cut into many chunks so the bar can advance
    assert len(calls) > 2 * 10 and calls[0][0] == 0


def test_learner_result_does_not_depend_on_bars():
    from latentstruct.learners import LCLR
    from latentstruct.testing import make_bag_problem

    task, X, y = make_bag_problem(random_state=3)
    a = LCLR(task, max_iter=5).fit(X, y)
    with show_progress():
        b = LCLR(task, max_iter=5).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.objective_curve_ == b.objective_curve_


def test_bars_on_a_terminal_only_within_show_progress_none():
    # tqdm's disable: True = never, None = only when its stream is a terminal, False = draw
    assert bar_disable(False) is True and bar_disable(True) is False  # a library caller
    with show_progress(None):  # the command line without --progress
        assert progress_enabled() and bar_disable(True) is None and bar_disable(False) is True
    with show_progress(True):  # --progress
        assert bar_disable(True) is False
    with show_progress(False):  # --quiet
        assert not progress_enabled()


def test_a_bar_on_a_pipe_draws_nothing_unless_forced(capsys):
    with show_progress(None):
        assert list(track(range(3), "x", delay=0)) == [0, 1, 2]
    assert "\r" not in capsys.readouterr().err  # pytest's stderr is not a terminal
    with show_progress(True):
        assert list(track(range(3), "x", delay=0)) == [0, 1, 2]
    assert "\r" in capsys.readouterr().err
