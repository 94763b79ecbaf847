"""The library's version, in a module of its own so that any module can name it without
importing the package's public face (which loads the estimators)."""

__version__ = "0.1.0"
