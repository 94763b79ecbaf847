"""A pytest plugin for the PyStruct runner (``pystruct_runner``): inside its subprocess
only, ``import pystruct`` and every ``pystruct.X`` give ``latentstruct.pystruct`` and
``latentstruct.pystruct.X``, numpy's removed aliases ``np.int`` and ``np.float`` (and
``np.bool`` where missing) are restored, and, when the ``nose`` package is absent (it no
longer installs on Python 3.11), the ``nose.tools`` assertions and ``nose.SkipTest`` the
suite imports are given by a small stand-in built on ``unittest``.  ``--pystruct-timeout
SECONDS`` fails a test that runs longer (a SIGALRM timer; off by default).

Loaded with ``-p pystruct_import_map``; never in the main test session, so nothing there
sees the aliases.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import signal
import sys
import types
import unittest

import numpy as np
import pytest

ALIAS = "pystruct"
TARGET = "latentstruct.pystruct"


class _AliasLoader(importlib.abc.Loader):
    """Loads ``pystruct.X`` as the already importable ``latentstruct.pystruct.X``."""

    def __init__(self, target: str):
        self.target = target

    def create_module(self, spec):
        # the import system keeps this module object under the alias, so both names refer
        # to one module
        module = importlib.import_module(self.target)
        self.spec = module.__spec__
        return module

    def exec_module(self, module):
        # the import system has just set the alias's spec on the module: put its own back,
        # so that it still knows itself as latentstruct.pystruct.X
        module.__spec__ = self.spec


class PystructAliasFinder(importlib.abc.MetaPathFinder):
    """Maps ``pystruct`` and its submodules onto ``latentstruct.pystruct``."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != ALIAS and not fullname.startswith(ALIAS + "."):
            return None
        real = TARGET + fullname[len(ALIAS):]
        if importlib.util.find_spec(real) is None:
            return None  # a module latentstruct does not have: the usual ImportError
        return importlib.util.spec_from_loader(fullname, _AliasLoader(real),
                                               is_package=True)


def _restore_numpy_aliases() -> None:
    # removed in numpy 1.24 (np.bool came back in 2.0 as numpy's own bool type)
    for name, value in (("int", int), ("float", float), ("bool", bool)):
        if name not in vars(np) and not hasattr(np, name):
            setattr(np, name, value)


def _nose_stand_in() -> None:
    try:
        import nose.tools  # noqa: F401  (the real package, where it installs)
        return
    except ImportError:
        pass
    case = unittest.TestCase()
    case.maxDiff = None
    tools = types.ModuleType("nose.tools")
    tools.__doc__ = "nose.tools' assertions as unittest.TestCase methods (runner stand-in)."
    for name in ("assert_equal", "assert_almost_equal", "assert_true", "assert_false",
                 "assert_less", "assert_greater", "assert_raises", "assert_not_equal",
                 "assert_less_equal", "assert_greater_equal", "assert_in", "assert_is"):
        words = name.split("_")[1:]
        method = "assert" + "".join(word.capitalize() for word in words)
        setattr(tools, name, getattr(case, method))
    nose = types.ModuleType("nose")
    nose.__doc__ = "nose's SkipTest and tools (runner stand-in)."
    nose.SkipTest = unittest.SkipTest
    nose.tools = tools
    sys.modules["nose"] = nose
    sys.modules["nose.tools"] = tools


class TestTimeout(Exception):
    """A test of the suite ran past ``--pystruct-timeout`` seconds."""


def pytest_addoption(parser):
    parser.addoption("--pystruct-timeout", type=float, default=0.0,
                     help="fail any test of the suite that runs longer than this many "
                          "seconds (0: no limit), so that one slow test does not hold the run")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    limit = item.config.getoption("--pystruct-timeout")
    if not limit or not hasattr(signal, "setitimer"):
        yield
        return

    def expire(signum, frame):
        raise TestTimeout(f"{item.nodeid} ran past {limit:g} s (--pystruct-timeout)")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


sys.meta_path.insert(0, PystructAliasFinder())
_restore_numpy_aliases()
_nose_stand_in()
