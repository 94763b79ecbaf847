"""The reranker's featurizer (:class:`RerankFeaturizer`) as a scikit-learn transformer, and
the task delegating to it: the same storage as the task's ``featurize``, rebuilt from a
model file's state, cloned and pickled, lists of another parser or input kind refused."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from latentstruct.data.dependency.kbest_synthetic import synthetic_kbest
from latentstruct.exceptions import ConfigError, InputError
from latentstruct.tasks.rerank import RerankCorpus, RerankFeaturizer, RerankTask, kbest_dataset


@pytest.fixture(scope="module")
def lists():
    header, sents = synthetic_kbest(12, 4, random_state=5, parser_id="parser-A")
    return kbest_dataset(header, sents[:8], "train.kbest"), kbest_dataset(header, sents[8:])


def same_storage(a: RerankCorpus, b: RerankCorpus) -> bool:
    return all(np.array_equal(x, y) for x, y in zip(a.storage.kernel_args(),
                                                     b.storage.kernel_args(), strict=True))


@pytest.mark.parametrize("params", [dict(domain="pos"), dict(domain="lexical", graph="sibling"),
                                    dict(domain="relation", n_hidden=2, base_score=False)])
def test_the_task_delegates_to_its_featurizer(lists, params):
    train, test = lists
    task = RerankTask(**params).fit(train)
    f = task.featurizer_
    assert isinstance(f, RerankFeaturizer)
    assert all(f.get_params()[k] == v for k, v in params.items())
    for name in ("parser_id_", "pos_column_", "base_scale_", "input_kind_",
                 "n_candidate_columns_"):
        assert getattr(task, name) == getattr(f, name)
    assert (f.parser_id_, f.pos_column_, f.input_kind_) == ("parser-A", "upos", "tokens")
    diffs = [c.score - s.candidates[0].score for s in train.records for c in s.candidates]
    assert f.base_scale_ == pytest.approx(np.sqrt(np.mean(np.square(diffs))))
    alone = RerankFeaturizer(**params).fit(train.records)
    assert same_storage(alone.transform(test.records), task.featurize(test))
    paper = {"pos": 5, "lexical": 3, "relation": 5}[params["domain"]]
    assert task.n_sub_values() == (params.get("n_hidden") or paper)


def test_rebuilt_from_the_model_state_it_featurises_the_same(lists):
    train, test = lists
    task = RerankTask(domain="lexical").fit(train)
    state, arrays = task.get_state()
    assert state == {"parser_id": "parser-A", "pos_column": "upos",
                     "base_scale": task.base_scale_} and arrays == {}
    back = RerankTask.from_state(task.get_params(), state, arrays)
    assert isinstance(back.featurizer_, RerankFeaturizer)
    assert same_storage(back.featurize(test), task.featurize(test))
    with pytest.raises(InputError, match="input_kind is 'words'"):
        RerankTask.from_state(task.get_params(), dict(state, input_kind="words"), arrays)


def test_another_parser_and_unfitted_use_are_refused(lists):
    train, _ = lists
    f = RerankFeaturizer().fit(train.records, path=train.path)
    header, sents = synthetic_kbest(3, 3, random_state=1, parser_id="parser-B")
    with pytest.raises(InputError, match="lists of parser parser-B, but this reranker was "
                                         "trained on lists of parser parser-A"):
        f.transform(kbest_dataset(header, sents).records)
    with pytest.raises(InputError, match="needs k-best lists with their header"):
        f.transform(list(train.records))
    with pytest.raises(NotFittedError, match="RerankFeaturizer"):
        RerankFeaturizer().transform(train.records)
    with pytest.raises(ConfigError, match="domain"):
        RerankFeaturizer(domain="words").fit(train.records)
    with pytest.raises(InputError, match="holds no sentences"):
        RerankFeaturizer().fit(kbest_dataset(header, []).records)


def test_clone_and_pickle(lists):
    train, test = lists
    f = RerankFeaturizer(domain="pos", n_hidden=3).fit(train.records)
    fresh = clone(f)
    assert fresh.get_params() == f.get_params() and not hasattr(fresh, "parser_id_")
    task = RerankTask(domain="pos", hash_bits=12).fit(train)
    copy = pickle.loads(pickle.dumps(task))
    assert copy.featurizer_.get_state() == task.featurizer_.get_state()
    assert same_storage(copy.featurize(test), task.featurize(test))
