"""Progress bars for the slow phases outside learners' own loops (parsing, building
examples, decoding a test set).

Library code wraps a slow loop in :func:`track`; whether a bar is drawn is decided by the
caller of the library, not by each function: the command line switches bars on with
:func:`show_progress` (off under ``--quiet``), and library users get none unless they ask
for them, as in scikit-learn, where ``verbose=0`` is the default.  Short loops draw nothing
even when bars are on: a bar appears only after ``delay`` seconds (tqdm's ``delay``).

Bars a learner draws because it was asked (``progress=True``) take their ``disable`` from
:func:`bar_disable`.  The command line runs with ``show_progress(None)``: bars appear only
when standard error is a terminal (tqdm's ``disable=None``), so a log file never fills with
carriage-return lines; ``--progress`` forces them (``show_progress(True)``).  A library
caller's ``progress=True`` always draws (a notebook's stderr is not a terminal).
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterable, Iterator

__all__ = ["track", "progress_bar", "show_progress", "progress_enabled", "bar_disable"]

_ENABLED: contextvars.ContextVar[bool] = contextvars.ContextVar("latentstruct_progress",
                                                                default=False)
#: whether bars are drawn only on a terminal (the command line without --progress)
_TERMINAL_ONLY: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "latentstruct_progress_terminal_only", default=False)


def progress_enabled() -> bool:
    """Whether :func:`track` draws bars in this context."""
    return _ENABLED.get()


def bar_disable(asked: bool) -> bool | None:
    """tqdm's ``disable`` for a bar its caller asked for (``asked``, e.g. a learner's
    ``progress``): ``True`` when not asked; ``None`` (drawn only when the stream is a
    terminal) within ``show_progress(None)``; ``False`` (drawn) otherwise."""
    if not asked:
        return True
    return None if _TERMINAL_ONLY.get() else False


@contextlib.contextmanager
def show_progress(enabled: bool | None = True):
    """Within the block, :func:`track` draws progress bars (``enabled=False``: none;
    ``None``: only when standard error is a terminal, for every bar of the package,
    including those learners draw with ``progress=True``)."""
    token = _ENABLED.set(enabled is not False)
    token_tty = _TERMINAL_ONLY.set(enabled is None)
    try:
        yield
    finally:
        _TERMINAL_ONLY.reset(token_tty)
        _ENABLED.reset(token)


def track(items: Iterable, desc: str, *, total: int | None = None, unit: str = "it",
          delay: float = 2.0) -> Iterator:
    """``items``, with a progress bar named ``desc`` when bars are on and the loop runs
    longer than ``delay`` seconds."""
    if not _ENABLED.get():
        yield from items
        return
    from tqdm.auto import tqdm

    if total is None and hasattr(items, "__len__"):
        total = len(items)
    with tqdm(items, desc=desc, total=total, unit=unit, delay=delay, leave=False,
              dynamic_ncols=True, disable=bar_disable(True)) as bar:
        yield from bar


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        return None


def progress_bar(total: int, desc: str, *, unit: str = "it", delay: float = 2.0):
    """A context manager yielding a bar with ``update(n)``: tqdm's when bars are on, a
    silent one otherwise (for loops that advance by more than one item at a time)."""
    if not _ENABLED.get():
        return _NoBar()
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit=unit, delay=delay, leave=False,
                dynamic_ncols=True, disable=bar_disable(True))
