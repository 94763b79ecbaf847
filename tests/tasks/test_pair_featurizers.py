"""The featurizers of the aligners (issue 43, item 2): ``PairFeaturizer`` (paraphrase, RTE)
and ``TranslitFeaturizer``, scikit-learn transformers whose output is what the tasks'
``featurize`` gives, and the one refusal of a model's score columns (D5)."""

import pickle

import numpy as np
import pytest
from sklearn.base import clone

from latentstruct.data.nlp import ParsedSentence
from latentstruct.exceptions import ConfigError, InputError, NotFittedError
from latentstruct.tasks import Dataset
from latentstruct.tasks.pairs import ParaphraseTask, RteTask
from latentstruct.tasks.pairs.featurizer import FIXED_NAMES, PairFeaturizer
from latentstruct.tasks.pairs.scores import scores_refusal
from latentstruct.tasks.translit import TransliterationTask
from latentstruct.tasks.translit.featurizer import TranslitFeaturizer



def random_sentence(rng, n):
    """A hand-made ParsedSentence over a few words (no spaCy), as test_graph_pairs makes."""
    tokens = [str(rng.choice(("cat", "dog", "run", "the", "big", "Paris"))) for _ in range(n)]
    pos = tuple(str(rng.choice(("NOUN", "VERB", "DET", "ADJ", "PROPN"))) for _ in range(n))
    heads = (-1,) + tuple(int(rng.integers(0, i)) for i in range(1, n))
    labels = ("ROOT",) + tuple(str(rng.choice(("nsubj", "dobj", "det"))) for _ in range(1, n))
    return ParsedSentence(" ".join(tokens), tuple(tokens), tuple(t.lower() for t in tokens),
                          pos, pos, ("",) * n, heads, labels, (False,) * n)


def hand_pairs(seed, n=5):
    rng = np.random.default_rng(seed)
    return [(random_sentence(rng, int(rng.integers(1, 5))),
             random_sentence(rng, int(rng.integers(1, 5)))) for _ in range(n)]


# ------------------------------------------------------------------------- PairFeaturizer
@pytest.mark.parametrize("cls", [ParaphraseTask, RteTask])
def test_pair_featurizer_is_what_the_task_fits_and_featurizes(cls):
    train, test = hand_pairs(0), hand_pairs(1)
    task = cls(use_wordnet=False, min_count=2).fit(Dataset(train, [1] * len(train)))
    f = clone(task.featurizer_)  # the task's parameters, unfitted
    assert "featurizer_" not in vars(f) and f.get_params()["min_count"] == 2
    assert f.get_params()["delete_nodes1"] is cls.delete_nodes1
    f.fit(train)
    assert f.get_feature_names_out().tolist() == task.feature_index_.names
    assert f.get_feature_names_out().tolist()[:len(FIXED_NAMES)] == list(FIXED_NAMES)
    ours, theirs = f.transform(test), task.featurize(Dataset(test, [1] * len(test)))
    assert len(ours) == len(theirs) == len(test)
    for a, b in zip(ours, theirs):
        assert a.features.shape == b.features.shape and (a.features != b.features).nnz == 0
        np.testing.assert_array_equal(a.problem.node_pairs, b.problem.node_pairs)
        assert a.kappa == b.kappa


def test_pair_featurizer_checks_its_parameters_and_fitting():
    with pytest.raises(NotFittedError, match="This PairFeaturizer instance is not fitted"):
        PairFeaturizer(use_wordnet=False).transform(hand_pairs(0))
    with pytest.raises(ConfigError, match=r"The 'top_k' parameter of PairFeaturizer must be an "
                                          r"int in the range \[1, inf\)\. Got 0 instead"):
        PairFeaturizer(top_k=0, use_wordnet=False).fit(hand_pairs(0))
    with pytest.raises(ConfigError, match="got 'os'"):
        PairFeaturizer(pipeline="os").fit(hand_pairs(0))


def test_pair_featurizer_pickles_without_its_handles():
    f = PairFeaturizer(use_wordnet=False).fit(hand_pairs(0))
    f._edit_sim("cat", "cats")  # the memo exists
    assert "_ed_memo" in vars(f)
    copy = pickle.loads(pickle.dumps(f))
    assert "_ed_memo" not in vars(copy) and "_ed_memo" in vars(f)  # the original keeps it
    a, b = f.transform(hand_pairs(3)), copy.transform(hand_pairs(3))
    assert all((x.features != y.features).nnz == 0 for x, y in zip(a, b))


def test_pair_task_params_reach_a_fitted_featurizer():
    task = ParaphraseTask(use_wordnet=False, time_limit=10.0).fit(Dataset(hand_pairs(0), [1] * 5))
    task.set_params(time_limit=2.5)  # an evaluation-time parameter
    assert task.featurize(Dataset(hand_pairs(1), [1] * 5))[0].time_limit == 2.5
    state, arrays = task.get_state()
    back = ParaphraseTask.from_state(task.get_params(), state, arrays)
    assert back.featurizer_.get_feature_names_out().tolist() == task.feature_index_.names
    assert back.n_pair_scores_ == 0


# --------------------------------------------------------------------- TranslitFeaturizer
WORDS = [("paris", "פריז"), ("london", "לונדון"), ("berlin", "ברלין"), ("Roma", "רומא")]


def test_translit_featurizer_is_what_the_task_fits_and_featurizes():
    data = Dataset(WORDS, [1, 1, 1, 1])
    task = TransliterationTask().fit(data)
    f = TranslitFeaturizer().fit(WORDS)
    assert f.source_alphabet_ == task.source_alphabet_ == sorted(set("parislondonberlinroma"))
    assert f.target_alphabet_ == task.target_alphabet_
    assert (f.n_source_chars, f.n_pair_scores_) == (len(f.source_alphabet_) + 1, 0)
    X = f.transform([("rome", "רומ"), ("paris", "לונדון"), ("rome", "פריז")])
    Y = task.featurize(Dataset([("rome", "רומ"), ("paris", "לונדון"), ("rome", "פריז")], [1, 1, 1]))
    for name in ("src_chars", "src_offsets", "tgt_chars", "tgt_offsets", "pair_src", "pair_tgt"):
        np.testing.assert_array_equal(getattr(X, name), getattr(Y, name))
    assert X.pair_src.tolist() == [0, 1, 0]  # each distinct word encoded once
    assert X.source_ids(0).tolist() == [f.source_alphabet_.index(c) + 1 if c in f.source_alphabet_
                                        else 0 for c in "rome"]


def test_translit_featurizer_refuses_bad_records_and_unfitted_use():
    with pytest.raises(NotFittedError, match="This TranslitFeaturizer instance is not fitted"):
        TranslitFeaturizer().transform(WORDS)
    with pytest.raises(InputError, match=r"record 1 must be a \(source, target\) pair of strings"):
        TranslitFeaturizer().fit([("a", "b"), ("a", "b", "c")])


def test_translit_model_state_rebuilds_the_featurizer():
    task = TransliterationTask().fit(Dataset(WORDS, [1, 1, 1, 1]))
    state, arrays = task.get_state()
    back = TransliterationTask.from_state(task.get_params(), state, arrays)
    assert isinstance(back.featurizer_, TranslitFeaturizer)
    assert back.source_alphabet_ == task.source_alphabet_ and back.n_features == task.n_features


# -------------------------------------------------------------------------- one refusal
@pytest.mark.parametrize("unit, fitted, got, text", [
    ("word", 2, 0, "this model was fitted with 2 word-pair score(s) per cell, but the examples "
                   "have none; give each example as (a, b, scores) over task.pair_tokens(X), e.g. "
                   "task.with_pair_scores(X, f) with the function the model was trained with"),
    ("word", 0, 3, "the examples carry 3 word-pair score(s) per cell but this model was fitted "
                   "without scores; give (a, b) pairs, or refit on scored examples"),
    ("word", 1, 2, "the examples carry 2 word-pair score(s) per cell but this model was fitted "
                   "with 1; compute the same scores the model was trained with"),
    ("character", 2, 0, "this model was fitted with 2 character-pair score(s) per cell, but the "
                        "pairs have none; give each pair as (source, target, scores), e.g. "
                        "task.with_pair_scores(X, f) with the function the model was trained "
                        "with"),
    ("character", 0, 1, "the pairs carry 1 character-pair score(s) per cell but this model was "
                        "fitted without scores; give (source, target) pairs, or refit on scored "
                        "pairs"),
])
def test_one_scores_refusal_names_the_unit(unit, fitted, got, text):
    err = scores_refusal(fitted, got, None, unit=unit)
    assert isinstance(err, InputError) and str(err) == text


def test_translit_task_refuses_scores_through_the_shared_refusal():
    task = TransliterationTask().fit(Dataset(WORDS, [1, 1, 1, 1]))
    scored = task.with_pair_scores([("paris", "פריז")], lambda a, b: np.ones((len(a), len(b))))
    with pytest.raises(InputError) as info:
        task.featurize(task.make_dataset(scored, [1]))
    assert str(info.value) == str(scores_refusal(0, 1, None, unit="character"))
