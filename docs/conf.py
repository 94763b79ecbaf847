"""Sphinx configuration of the latentstruct documentation site.

The stack, and why each piece:

* **Sphinx** -- the documentation tool of the scientific Python stack; it cross-references
  the narrative pages, the API reference and the gallery, and ``-W`` turns every broken
  reference or malformed docstring into a build failure.
* **myst-parser** -- the narrative pages (``docs/*.md``, ``docs/guide/*.md``) are Markdown, as
  they were before there was a site, so they stay readable on GitHub and in an editor.
* **numpydoc** -- the library's docstrings follow the numpydoc convention (Parameters,
  Returns, ... sections); numpydoc renders those sections for the API reference, which
  ``sphinx.ext.autosummary`` generates from the public modules' docstrings
  (``docs/api.rst``).
* **sphinx-gallery** -- executes every ``examples/*.py`` at build time and renders its
  code, printed output and figures, so the examples on the site are ones that ran.
* **pydata-sphinx-theme** -- scikit-learn's (and numpy's, pandas') theme: the layout users
  of those libraries already know.

The command-line reference (``docs/cli.md``) is generated from the argparse parsers by a
local extension (``docs/_ext/cli_reference.py``), so it cannot drift from the command line.

Build (from the repository root; zero warnings is the standard)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html

Generated, git-ignored: ``docs/_build/``, ``docs/generated/`` (autosummary's stubs) and
``docs/auto_examples/`` (sphinx-gallery's output).  The examples read the shared data sets
from ``$LATENTSTRUCT_DATA``; when it is unset this file sets it to ``<repository>/../shared/data``,
and a relative value is made absolute against the repository root (the build is run from
there).  It must be absolute before the examples run: sphinx-gallery runs each example with
``examples/`` as its working directory, where the library's own relative default,
``../shared/data``, would point inside the repository.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(DOCS / "_ext"))

_data = Path(os.environ.get("LATENTSTRUCT_DATA") or "../shared/data").expanduser()
os.environ["LATENTSTRUCT_DATA"] = str(_data if _data.is_absolute() else (ROOT / _data).resolve())
os.environ.setdefault("MPLBACKEND", "Agg")  # the examples draw without a display

import latentstruct  # noqa: E402  (after sys.path and the environment are set)

# -- Project -------------------------------------------------------------------------------
project = "latentstruct"
author = "latentstruct contributors"
copyright = "latentstruct contributors"
release = latentstruct.__version__
version = release

# -- General -------------------------------------------------------------------------------
extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "cli_reference",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
templates_path = ["_templates"]
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store",
                    # sphinx-gallery's per-example leftovers that are not pages
                    "auto_examples/*.ipynb", "auto_examples/*.py", "auto_examples/*.zip",
                    "auto_examples/*.json", "auto_examples/*.md5", "auto_examples/*.pickle"]
suppress_warnings = []
nitpicky = False

# -- MyST (Markdown pages) -----------------------------------------------------------------
# headings get GitHub-style anchors, so in-page links such as [x](#the-part-every-task-writes)
# resolve on the site as they do on GitHub
myst_heading_anchors = 4
myst_enable_extensions = ["colon_fence", "deflist", "dollarmath"]

# -- autodoc / autosummary / numpydoc ------------------------------------------------------
autosummary_generate = True  # write docs/generated/*.rst from the autosummary tables
autosummary_imported_members = True
# no autodoc_default_options: a default given there replaces the directive's own option
# (``"members": False`` there silently emptied every class page the template below asks
# ``:members:`` of); docs/_templates/autosummary/class.rst asks for each class's members,
# inherited ones included, and _skip_member below filters the inherited noise
autodoc_default_options: dict[str, str | bool] = {}
autodoc_typehints = "none"  # numpydoc's Parameters sections carry the types
add_module_names = False
numpydoc_show_class_members = False  # the class template lists members itself
numpydoc_class_members_toctree = False
numpydoc_validation_checks: set[str] = set()  # no style checks; real RST errors still fail
numpydoc_xref_param_type = False


def _summary_keeping_literals(extract_summary):
    """autosummary's one-line summaries cut a docstring's first sentence at ". " even inside
    an inline literal (``w . d >= b``), leaving an unterminated literal in the table;
    Sphinx's own guard against that re-parses the whole stanza instead of the cut sentence.
    Extend such a cut to the next sentence end that closes every literal."""

    import re

    def wrapped(doc, settings):
        summary = extract_summary(doc, settings)
        if summary.count("``") % 2 == 0:
            return summary
        stanza = []
        for line in doc:
            if not line.strip():
                if stanza:
                    break
                continue
            stanza.append(line.strip())
        sentences = re.split(r"\.\s+", " ".join(stanza))
        for i in range(1, len(sentences) + 1):
            candidate = ". ".join(sentences[:i]).rstrip(".") + "."
            if candidate.count("``") % 2 == 0:
                return candidate
        return summary

    return wrapped


import sphinx.ext.autosummary  # noqa: E402

sphinx.ext.autosummary.extract_summary = _summary_keeping_literals(
    sphinx.ext.autosummary.extract_summary)

# A class page lists every public method and attribute of the class, inherited ones and
# undocumented ones included (docs/_templates/autosummary/class.rst): the estimators' fit,
# partial_fit, predict, score and save are defined on latentstruct.estimators.Estimator,
# a task's methods on latentstruct.tasks.base.Task, and get_params/set_params (and a
# transformer's fit_transform) on scikit-learn's bases are part of every estimator's API.
# Left out, by name, not by hiding members in general:
#
# * scikit-learn's metadata-routing machinery -- the ``set_{method}_request`` methods it
#   generates for every estimator whose fit/score/partial_fit takes an optional argument,
#   and ``get_metadata_routing`` -- which only matters inside meta-estimators with
#   ``sklearn.set_config(enable_metadata_routing=True)``; their docstrings are not valid
#   RST either (about 80 errors under -W);
# * scikit-learn's ``set_output`` (pandas/polars output), which the featurizers inherit
#   from TransformerMixin but cannot honour -- their transform returns one matrix per
#   sentence or example, not one table -- and whose docstring refers to labels of
#   scikit-learn's own site;
# * members of Python's built-in types (``tuple.count``, ``Exception.with_traceback``,
#   ``Exception.args``, ...), which a NamedTuple or an exception class inherits.
_SKLEARN_INTERNALS = re.compile(r"set_\w+_request|get_metadata_routing|set_output")


def _skip_member(app, what, name, obj, skip, options):
    if what not in ("class", "exception"):
        return None
    if _SKLEARN_INTERNALS.fullmatch(name) and _defined_in_sklearn(obj):
        return True
    owner = getattr(obj, "__objclass__", None)  # a method or slot of a built-in type
    if isinstance(owner, type) and owner.__module__ == "builtins":
        return True
    return None


def _defined_in_sklearn(obj) -> bool:
    # set_*_request are sklearn.utils._metadata_requests.RequestMethod instances placed on
    # the class itself; the others are sklearn functions (set_output behind available_if)
    module = getattr(obj, "__module__", None) or type(obj).__module__
    return module.split(".")[0] == "sklearn"


# -- sphinx-gallery ------------------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": "../examples",  # relative to docs/
    "gallery_dirs": "auto_examples",
    "filename_pattern": r".*\.py$",  # execute every example, not only plot_*.py
    "ignore_pattern": r"__init__\.py",
    "abort_on_example_error": True,
    # matplotlib's state is reset, and files an example writes into examples/ are removed
    "reset_modules": ("matplotlib", "gallery_hooks.remove_example_leftovers"),
    "reset_modules_order": "both",
    "download_all_examples": False,
    "remove_config_comments": True,
    "show_memory": False,
    "plot_gallery": "True",
    "within_subsection_order": "FileNameSortKey",
}

# -- HTML ----------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"latentstruct {release}"
html_static_path: list[str] = []
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    # the site's pages are listed in the left sidebar (grouped by index.md's toctree
    # captions), not as header links: the user-guide titles are too long for a header
    "navbar_center": [],
    "secondary_sidebar_items": ["page-toc"],
}
html_sidebars = {"**": ["sidebar-site-nav"]}
# the theme's colour mode; unset, its script logs "Got invalid theme mode" to the console
html_context = {"default_mode": "auto"}
html_show_sourcelink = False
html_last_updated_fmt = None


# -- API drift check -----------------------------------------------------------------------
# docs/api.rst lists each public module's names by hand (autosummary needs them in the
# source); this check warns -- a build failure under -W -- when a name in a module's
# __all__ is missing from the page, so a new public name cannot go undocumented.
_API_MODULES = ["latentstruct", "latentstruct.datasets", "latentstruct.tasks", "latentstruct.tasks.contracts",
                "latentstruct.featurizers", "latentstruct.learners",
                "latentstruct.inference", "latentstruct.solvers", "latentstruct.io",
                "latentstruct.crfsuite", "latentstruct.pystruct.models",
                "latentstruct.pystruct.learners", "latentstruct.pystruct.inference",
                "latentstruct.pystruct.utils", "latentstruct.pystruct.datasets"]
_API_SKIP = {"latentstruct": {"__version__"}}


def _check_api_page(app):
    import importlib
    import re

    from sphinx.util import logging

    logger = logging.getLogger("latentstruct.api")
    text = (DOCS / "api.rst").read_text(encoding="utf-8")
    for module_name in _API_MODULES:
        block = re.search(rf"^\.\. currentmodule:: {re.escape(module_name)}\n"
                          r"(.*?)(?=^\.\. currentmodule::|\Z)", text, re.MULTILINE | re.DOTALL)
        entries = re.findall(r"^\s{3,}~?([\w.]+)\s*$", block.group(1), re.MULTILINE) if block else []
        listed = set(entries)
        names = set(getattr(importlib.import_module(module_name), "__all__", ()))
        missing = sorted(names - listed - _API_SKIP.get(module_name, set()))
        if missing:
            logger.warning("docs/api.rst does not list %s from %s.__all__",
                           ", ".join(missing), module_name, location="api")


def setup(app):
    app.connect("builder-inited", _check_api_page)
    app.connect("autodoc-skip-member", _skip_member)
