"""sphinx-gallery hooks, named in ``docs/conf.py`` by import path (a string keeps the
configuration picklable, so Sphinx can cache it)."""

from __future__ import annotations

from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
_before: set[Path] = set()


def remove_example_leftovers(gallery_conf, fname, when):
    """Delete the files an example wrote next to itself.

    sphinx-gallery runs each example with ``examples/`` as its working directory, so an
    example that saves a model file (``tagger.save("pos.npz")``) would leave it in the
    source tree.  Run before and after each example: only files that appeared while it ran
    are removed.
    """
    global _before
    if when == "before":
        _before = set(EXAMPLES.iterdir())
        return
    for path in set(EXAMPLES.iterdir()) - _before:
        if path.is_file():
            path.unlink()
