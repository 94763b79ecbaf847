"""Numba's cache in the worker processes of :mod:`latentstruct.parallel`.

Kernels compiled with ``cache=True`` are cached where numba finds a writable place:
``NUMBA_CACHE_DIR`` if set, else the package's ``__pycache__``, else numba's per-user cache
directory.  When none is writable (a read-only install and home on a cluster node),
importing this module (which the :mod:`latentstruct.parallel` package does first, and so
does unpickling shared data in a worker) points ``NUMBA_CACHE_DIR`` at a per-user directory under the temp
folder, so that workers compile once and load after.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable

__all__ = ["ensure_numba_cache", "writable_dir"]


def writable_dir(path: str) -> bool:
    """Whether ``path`` exists or can be made, and a file can be written in it (numba's
    own test of a cache location)."""
    try:
        os.makedirs(path, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()
        return True
    except OSError:
        return False


def _user_cache_dir() -> str:
    from numba.misc.appdirs import AppDirs  # numba's own choice of per-user directory

    return AppDirs(appname="numba", appauthor=False).user_cache_dir


def ensure_numba_cache(environ=None, *, in_tree: str | None = None,
                       user_wide: Callable[[], str] = _user_cache_dir) -> str:
    """Make sure numba kernels compiled with ``cache=True`` have a writable cache, and say
    where it is.

    ``NUMBA_CACHE_DIR`` wins when it is set and writable; else the package's own
    ``__pycache__`` (``in_tree``), else numba's per-user cache directory (``user_wide()``);
    when none is writable, ``NUMBA_CACHE_DIR`` is set (in ``environ``, by default
    ``os.environ``, and in numba's loaded configuration) to a per-user directory under the
    temp folder.  Without a writable place numba refuses to import a cached kernel.
    """
    environ = os.environ if environ is None else environ
    given = environ.get("NUMBA_CACHE_DIR")
    if given and writable_dir(given):
        return given
    in_tree = in_tree or os.path.join(os.path.dirname(os.path.dirname(__file__)), "tasks",
                                      "__pycache__")
    if writable_dir(in_tree):
        return in_tree
    user = user_wide()
    if writable_dir(user):
        return user
    fallback = os.path.join(tempfile.gettempdir(), f"latentstruct-numba-{_user_id()}")
    if not (writable_dir(fallback) and _owned(fallback)):
        fallback = tempfile.mkdtemp(prefix="latentstruct-numba-")
    environ["NUMBA_CACHE_DIR"] = fallback
    if environ is os.environ and "numba" in sys.modules:
        sys.modules["numba"].core.config.reload_config()
    return fallback


def _user_id() -> str:
    return str(os.getuid()) if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")


def _owned(path: str) -> bool:
    """A directory of ours, not a link or another user's (a shared temp folder)."""
    if os.path.islink(path):
        return False
    return not hasattr(os, "getuid") or os.stat(path).st_uid == os.getuid()


ensure_numba_cache()
