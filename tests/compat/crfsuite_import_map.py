"""A pytest plugin for the peer-suite runner: ``import sklearn_crfsuite`` (and its
``metrics``) gives ``latentstruct.crfsuite``, so sklearn-crfsuite's own test files run
against latentstruct with nothing changed but what their import line names.  Loaded only
in the runner's subprocess (``-p crfsuite_import_map``), never in the main test session,
where the real sklearn_crfsuite stays importable."""

import sys

import latentstruct.crfsuite
import latentstruct.crfsuite.metrics

sys.modules["sklearn_crfsuite"] = latentstruct.crfsuite
sys.modules["sklearn_crfsuite.metrics"] = latentstruct.crfsuite.metrics
