"""A composed task takes its featurizer's parameters by name, declared once, on the
featurizer (its signature and ``_parameter_constraints``): the task's parameter list, its
defaults (the featurizer's, or the task's ``featurizer_defaults``), its value checks and
``make_featurizer`` all come from that one declaration (``tasks.base.featurizer_param_defaults``)."""

import inspect

import pytest

from latentstruct.exceptions import ConfigError
from latentstruct.tasks import TASKS
from latentstruct.tasks.base import featurizer_param_defaults

#: the tasks that take their featurizer's parameters, and what each sets itself
COMPOSED = {"pos": {"uses_pos"}, "chunk": {"uses_pos"}, "citations": {"uses_pos"},
            "sequence": {"uses_pos", "window", "affix_length"}, "doccls": {"classes"},
            "hcrf": {"classes"}, "rerank": set(), "dep": {"classes", "tagger"},
            "grammaticality": set()}


def _signature_defaults(cls) -> dict:
    return {k: p.default for k, p in inspect.signature(cls.__init__).parameters.items()
            if k != "self" and p.kind is p.POSITIONAL_OR_KEYWORD}


@pytest.mark.parametrize("name", sorted(COMPOSED))
def test_a_tasks_featurizer_parameters_are_the_featurizers_declaration(name):
    task_cls = TASKS[name]
    featurizer = task_cls.featurizer_class
    declared = _signature_defaults(featurizer)
    taken = featurizer_param_defaults(task_cls)
    # every featurizer parameter but those the task sets itself, in the featurizer's order
    assert list(taken) == [k for k in declared if k not in COMPOSED[name]]
    assert set(task_cls.featurizer_fixed) == COMPOSED[name]
    for k, v in taken.items():
        assert v == task_cls.featurizer_defaults.get(k, declared[k]), (name, k)
    # the task's parameters: the featurizer's, then its own signature's; none listed twice
    own = [k for k, p in inspect.signature(task_cls.__init__).parameters.items()
           if p.kind is p.KEYWORD_ONLY]
    assert list(task_cls.param_defaults()) == list(taken) + own
    assert not set(taken) & set(own) and not set(taken) & set(task_cls._parameter_constraints)
    # an unfitted featurizer of the task's values, the fixed ones included
    task = task_cls()
    made = task.make_featurizer()
    assert type(made) is featurizer
    assert made.get_params() == {**declared, **taken, **task_cls.featurizer_fixed}


def test_the_tasks_own_defaults_and_given_values_reach_the_featurizer():
    assert TASKS["pos"]().make_featurizer().affix_length == 4  # pos's featurizer_defaults
    assert TASKS["citations"]().make_featurizer().window == 1
    assert TASKS["chunk"]().make_featurizer().uses_pos is True  # fixed: the chunker reads POS
    task = TASKS["pos"](window=1, min_count=3, tag_column="xpos")
    assert (task.window, task.min_count, task.tag_column) == (1, 3, "xpos")
    assert task.get_params()["window"] == 1 and repr(task) == \
        "PosTask(min_count=3, window=1, tag_column='xpos')"
    assert task.make_featurizer().get_params()["window"] == 1
    task.set_params(window=0)
    assert task.make_featurizer().window == 0
    doc = TASKS["doccls"](features="tfidf", split="train")
    assert doc.make_featurizer().features == "tfidf" and doc.split == "train"


@pytest.mark.parametrize("name, bad", [("pos", "windw"), ("sequence", "window"),
                                       ("chunk", "uses_pos"), ("doccls", "classes"),
                                       ("dep", "tagger")])
def test_a_name_that_is_no_parameter_is_refused_as_python_refuses_one(name, bad):
    with pytest.raises(TypeError, match=f"unexpected keyword argument '{bad}'.*its "
                                        f"parameters: "):
        TASKS[name](**{bad: 1})


def test_positional_values_are_refused():
    with pytest.raises(TypeError):
        TASKS["pos"](1)


@pytest.mark.parametrize("name, param, value", [("pos", "window", -1), ("doccls", "features", "x"),
                                                ("hcrf", "window", 9), ("rerank", "domain", "x"),
                                                ("dep", "pos", "x"),
                                                ("grammaticality", "min_count", 0)])
def test_the_featurizers_declaration_checks_the_tasks_value(name, param, value):
    task_cls = TASKS[name]
    with pytest.raises(ConfigError, match=f"{param}"):
        task_cls.validate_params({param: value})
    with pytest.raises(ConfigError, match=f"the '{task_cls.name}' task"):
        task_cls(**{param: value}).check_params()
