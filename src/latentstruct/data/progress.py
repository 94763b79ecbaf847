"""Progress bars for the slow phases outside learners' own loops (parsing, building
examples, decoding a test set).

Library code wraps a slow loop in :func:`track`; whether a bar is drawn is decided by the
caller of the library, not by each function: the command line switches bars on with
:func:`show_progress` (off under ``--quiet``), and library users get none unless they ask
for them, as in scikit-learn, where ``verbose=0`` is the default.  Short loops draw nothing
even when bars are on: a bar appears only after ``delay`` seconds (tqdm's ``delay``).
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterable, Iterator

__all__ = ["track", "progress_bar", "show_progress", "progress_enabled"]

_ENABLED: contextvars.ContextVar[bool] = contextvars.ContextVar("latentstruct_progress",
                                                                default=False)


def progress_enabled() -> bool:
    """Whether :func:`track` draws bars in this context."""
    return _ENABLED.get()


@contextlib.contextmanager
def show_progress(enabled: bool = True):
    """Within the block, :func:`track` draws progress bars (``enabled=False``: none)."""
    token = _ENABLED.set(bool(enabled))
    try:
        yield
    finally:
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
              dynamic_ncols=True) as bar:
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
                dynamic_ncols=True)
