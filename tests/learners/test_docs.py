"""learners.docs: shared docstring entries are filled into the learners' docstrings."""

import inspect

import pytest

from latentstruct.learners import LEARNERS, get_learner_class
from latentstruct.learners.docs import PARAMETER_DOCS, fill_doc
from latentstruct.options import parameter_docs


@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_no_learner_docstring_keeps_a_placeholder(name):
    assert "%(" not in (get_learner_class(name).__doc__ or "")


def test_fill_doc_indents_the_entry_as_its_placeholder_line():
    @fill_doc
    class Learner:
        """One line.

        Parameters
        ----------
        %(structure_C)s
        tol : float, default 0.001
            Stopping tolerance.
        """

    doc = inspect.getdoc(Learner)
    assert PARAMETER_DOCS["structure_C"] in doc
    assert list(parameter_docs(Learner)) == ["structure", "C", "tol"]


def test_fill_doc_refuses_an_unknown_name():
    class Learner:
        """%(no_such_entry)s"""

    with pytest.raises(KeyError):
        fill_doc(Learner)
