"""latentstruct: discriminative learning over constrained latent structures.

The estimators on raw Python data (``Tagger``, ``Chunker``, ``DependencyParser``,
``DocumentClassifier``, ``PairClassifier``, ``Estimator``) and ``load`` are importable from
here; they are loaded on first use, so that ``latentstruct --help`` does not pay for
scikit-learn and numba.  So is the command line, ``latentstruct.cli`` (``main(argv)`` runs
``latentstruct ARGS...`` in this process), after a plain ``import latentstruct``.
"""

from .version import __version__

_ESTIMATOR_NAMES = ("Estimator", "Tagger", "Chunker", "DependencyParser", "DocumentClassifier",
                    "PairClassifier", "load")
__all__ = ["__version__", *_ESTIMATOR_NAMES]


#: subpackages reachable as attributes after ``import latentstruct``, imported on first use
_LAZY_SUBPACKAGES = ("cli",)


def __getattr__(name):
    if name in _LAZY_SUBPACKAGES:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    if name in _ESTIMATOR_NAMES:
        from . import estimators

        return getattr(estimators, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_ESTIMATOR_NAMES) | set(_LAZY_SUBPACKAGES))
