"""Where the learners' modules were before they were grouped by concept (issue 53).

Until then every learner was one module directly under ``latentstruct.learners``
(``latentstruct.learners.lclr``, ``latentstruct.learners.crf``, ...); now they live in
concept subpackages (``ssvm``, ``latent``, ``online``, ``probabilistic``), and the loop of the
latent learners is one module (``latent.alternating``, which absorbed
``alternating_chunks``, ``alternating_result`` and ``alternating_state``).

latentstruct's own files never name a module: model files and checkpoints name a learner by
its registry name (``"lclr"``), SaveLogger files name only ``latentstruct.pystruct``'s
classes.  Python's pickles do name modules (``latentstruct.learners.lclr:LCLR``), and user
code may import the old paths; both keep working through :data:`MOVED_MODULES`, with a
``DeprecationWarning``:

* an old module path that is no longer a package is served by a finder on ``sys.meta_path``
  (:func:`install`): importing it gives a module that forwards every attribute to the new
  module (the same class objects, so ``isinstance`` and pickles see no difference);
* the two old modules whose path is now their concept's package (``latentstruct.learners.
  ssvm`` and ``latentstruct.learners.online``) forward the names the old module defined from
  the package (``__getattr__ = forward_names(...)`` in the package's ``__init__``).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import pkgutil
import sys
import warnings

__all__ = ["MOVED_MODULES", "install", "forward_names"]

_PREFIX = "latentstruct.learners."

#: old module path -> new module path
MOVED_MODULES: dict[str, str] = {
    _PREFIX + old: _PREFIX + new for old, new in {
        # the structured SVMs (squared or linear slacks, SGD, DISTRO's label embeddings)
        "ssvm": "ssvm.ssvm",
        "sgd_ssvm": "ssvm.sgd_ssvm",
        "one_slack": "ssvm.one_slack",
        "n_slack": "ssvm.n_slack",
        "frank_wolfe": "ssvm.frank_wolfe",
        "subgradient": "ssvm.subgradient",
        "l1_ssvm": "ssvm.l1_ssvm",
        "distro": "ssvm.distro",
        "distro_data": "ssvm.distro_data",
        "distro_model": "ssvm.distro_model",
        "distro_tuning": "ssvm.distro_tuning",
        # binary decisions over latent structures, and their alternating loop
        "lclr": "latent.lclr",
        "lclr_variant": "latent.lclr_variant",
        "jlis": "latent.jlis",
        "alternating": "latent.alternating",
        "alternating_chunks": "latent.alternating",
        "alternating_result": "latent.alternating",
        "alternating_state": "latent.alternating",
        # one example at a time
        "perceptron": "online.perceptron",
        "structured_pa": "online.structured_pa",
        "arow": "online.arow",
        "latent_pa": "online.latent_pa",
        "online": "online.online",
        "online_steps": "online.online_steps",
        # log-linear models
        "crf": "probabilistic.crf",
        "reranker": "probabilistic.reranker",
        "mixture": "probabilistic.mixture",
    }.items()
}


def _warn(old: str, new: str) -> None:
    warnings.warn(f"{old} is now {new} (the learners are grouped by concept); import "
                  f"from the new path, or from latentstruct.learners", DeprecationWarning,
                  stacklevel=3)


class _Forwarder(importlib.abc.Loader):
    """Loads an old module path as a module forwarding every attribute to the new one."""

    def __init__(self, target: str):
        self.target = target

    def create_module(self, spec):
        return None  # the default: a fresh module, with the old name and its own spec

    def exec_module(self, module) -> None:
        _warn(module.__name__, self.target)
        real = importlib.import_module(self.target)
        module.__dict__["__getattr__"] = lambda name: getattr(real, name)
        module.__dict__["__dir__"] = lambda: dir(real)
        module.__dict__["__all__"] = list(getattr(real, "__all__", ()))
        module.__dict__["__moved_to__"] = self.target


class _MovedFinder(importlib.abc.MetaPathFinder):
    """Finds the old module paths that no file or package holds any more."""

    def find_spec(self, fullname, path=None, target=None):
        new = MOVED_MODULES.get(fullname)
        if new is None or new.startswith(fullname + "."):  # now a package: found as such
            return None
        return importlib.util.spec_from_loader(fullname, _Forwarder(new))


_FINDER = _MovedFinder()


def install() -> None:
    """Put the finder of the old module paths on ``sys.meta_path`` (once; last, so that
    it is asked only for a path nothing else finds)."""
    if not any(isinstance(f, _MovedFinder) for f in sys.meta_path):
        sys.meta_path.append(_FINDER)


def forward_names(package: str, path):
    """A module ``__getattr__`` for the package ``package`` (with ``__path__`` ``path``)
    that was a module before: a name that is none of the package's submodules is looked up
    in the module that holds the old module's code now (``MOVED_MODULES[package]``)."""
    target = MOVED_MODULES[package]
    submodules = {info.name for info in pkgutil.iter_modules(path)}

    def __getattr__(name: str):
        if name.startswith("__") or name in submodules:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(target), name)
        _warn(f"{package}.{name}", f"{target}.{name}")
        return value

    return __getattr__
