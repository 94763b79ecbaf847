"""A user's word-pair scores as alignment features of paraphrase / RTE (issue 43).

Examples given as ``(a, b, scores)``: the score is the word-mapping feature ``map:score:K``
and widens the candidates; a toy where only the score separates the classes is learned by
LCLR and the two-stage baseline; bad scores are InputErrors naming the example and the
cell; a model records ``n_pair_scores_``, survives save/load and refuses the other input
form.  Parsing uses spaCy (``require_spacy``); ``use_wordnet=False`` keeps WordNet out.
"""

import warnings

import numpy as np
import pytest

import latentstruct
from latentstruct.exceptions import ConvergenceWarning, InputError
from latentstruct.learners import LCLR, TwoStage
from latentstruct.tasks.pairs import ParaphraseTask, RteTask
from latentstruct.testing import check_task

pytestmark = pytest.mark.usefixtures("require_spacy")

# distinct words, so that WNSim (lemma equality here) and edit similarity see little
SENTENCES = [("Cats sleep quietly", "Dogs run fast"), ("Rivers flow south", "Birds sing loudly"),
             ("Children read books", "Farmers plant corn"), ("Engines roar often", "Bells ring twice")]


def toy(task):
    """Every pair twice: +1 with a high score on the diagonal, -1 with all scores 0, so the
    text alone cannot separate the classes and the score can."""
    X, y = [], []
    for (a, b), (ta, tb) in zip(SENTENCES, task.pair_tokens(SENTENCES)):
        S = np.zeros((len(ta), len(tb)))
        np.fill_diagonal(S, 1.0)
        X += [(a, b, S), (a, b, np.zeros_like(S))]
        y += [1, -1]
    return X, np.array(y)


def test_pair_tokens_are_the_graph_nodes_and_scores_become_features():
    task = ParaphraseTask(use_wordnet=False)
    assert task.pair_tokens([("The cat sat.", "A dog, barking!")]) == [
        (("The", "cat", "sat"), ("A", "dog", "barking"))]
    X = task.with_pair_scores(SENTENCES[:1], lambda a, b: np.full((len(a), len(b), 2), 0.5))
    task.fit(task.make_dataset(X, [1]))
    assert task.n_pair_scores_ == 2
    x = task.featurize(task.make_dataset(X))[0]
    col = task.feature_index_.lookup("map:score:1")
    n_map = x.problem.n_node_pairs
    # every word mapping (and nothing else) has the score, divided by kappa
    np.testing.assert_allclose(x.features[:n_map, col].toarray().ravel(), 0.5 / x.kappa)
    assert x.features[n_map:, col].nnz == 0


def test_scores_add_their_top_k_pairs_to_the_candidates():
    task = ParaphraseTask(use_wordnet=False, top_k=1)
    (ta, tb), = task.pair_tokens(SENTENCES[:1])
    S = np.zeros((len(ta), len(tb)))
    S[0, 2] = 5.0  # "Cats" - "fast": no lexical affinity
    plain = task.fit(task.make_dataset(SENTENCES[:1], [1])).featurize(
        task.make_dataset(SENTENCES[:1]))[0]
    task2 = ParaphraseTask(use_wordnet=False, top_k=1)
    Xs = [(*SENTENCES[0], S)]
    scored = task2.fit(task2.make_dataset(Xs, [1])).featurize(task2.make_dataset(Xs))[0]
    assert (0, 2) in scored.pair_index
    assert set(plain.pair_index) <= set(scored.pair_index)


@pytest.mark.parametrize("learner", [LCLR, TwoStage])
def test_only_the_score_separates_and_it_is_learned(learner):
    task = ParaphraseTask(use_wordnet=False)
    X, y = toy(task)
    task.fit(task.make_dataset(X, y))
    F = task.featurize(task.make_dataset(X, y))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = learner(task, C=10.0).fit(F, y)
    acc = float(np.mean(model.predict(F) == y))
    assert acc == 1.0
    assert model.coef_[task.feature_index_.lookup("map:score:0")] > 0
    # without the scores the two copies of a pair are the same input: chance at best
    plain = ParaphraseTask(use_wordnet=False)
    Xp = [(a, b) for a, b, _ in X]
    plain.fit(plain.make_dataset(Xp, y))
    Fp = plain.featurize(plain.make_dataset(Xp, y))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        acc_plain = float(np.mean(learner(plain, C=10.0).fit(Fp, y).predict(Fp) == y))
    assert acc_plain <= 0.5


def matchings(x):
    """Every one-to-one word mapping over the candidates of ``x`` (each a legal alignment)."""
    pairs = x.problem.node_pairs.tolist()

    def grow(k, a, used):
        if k == len(pairs):
            yield a.copy()
            return
        yield from grow(k + 1, a, used)
        i, j = pairs[k]
        if a[i] < 0 and j not in used:
            a[i] = j
            yield from grow(k + 1, a, used | {j})
            a[i] = -1

    yield from grow(0, np.full(x.n1, -1, dtype=np.int64), frozenset())


@pytest.mark.parametrize("task_class", [ParaphraseTask, RteTask])
def test_check_task_passes_with_scores(task_class):
    task = task_class(use_wordnet=False)
    X, y = toy(task)
    task.fit(task.make_dataset(X, y))
    check_task(task, task.make_dataset(X[:4], y[:4]), enumerate=matchings)


def test_errors_name_the_example_and_the_cell():
    task = ParaphraseTask(use_wordnet=False)
    a, b = SENTENCES[0]
    S = np.zeros((3, 3))
    S[1, 2] = np.inf
    with pytest.raises(InputError, match=r"X\[1\]\[2\]\[1, 2\] is inf"):
        task.make_dataset([(a, b, np.zeros((3, 3))), (a, b, S)])
    with pytest.raises(InputError, match=r"X\[0\]\[2\]\[0, 1, 1\] is nan"):
        task.make_dataset([(a, b, np.array([[[0, 0], [0, np.nan]]] * 3))])
    with pytest.raises(InputError, match=r"X\[1\] has 2 word-pair scores per cell but X\[0\] has 1"):
        task.make_dataset([(a, b, np.zeros((3, 3))), (a, b, np.zeros((3, 3, 2)))])
    with pytest.raises(InputError, match=r"X\[1\] has no word-pair scores"):
        task.make_dataset([(a, b, np.zeros((3, 3))), (a, b)])
    with pytest.raises(InputError, match=r"X\[1\]\[2\]: the word-pair scores have shape \(3, 4\) "
                                         r"but the example has 3 x 3 tokens.*pair_tokens"):
        task.fit(task.make_dataset([(a, b, np.zeros((3, 3))), (a, b, np.zeros((3, 4)))], [1, 0]))
    with pytest.raises(InputError, match=r"f returned shape \(2, 2\) for X\[0\]"):
        task.with_pair_scores([(a, b)], lambda x, z: np.zeros((2, 2)))


def test_save_load_round_trip_and_refusals(tmp_path):
    task = ParaphraseTask(use_wordnet=False)
    X, y = toy(task)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est = latentstruct.PairClassifier(task="paraphrase", use_wordnet=False).fit(X, y)
    path = tmp_path / "m.npz"
    est.save(path)
    back = latentstruct.load(path)
    np.testing.assert_array_equal(back.predict(X), est.predict(X))
    np.testing.assert_allclose(back.decision_function(X), est.decision_function(X))
    with pytest.raises(InputError, match=r"fitted with 1 word-pair score\(s\).*with_pair_scores"):
        back.predict([(a, b) for a, b, _ in X])
    plain = latentstruct.PairClassifier(task="paraphrase", use_wordnet=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        plain.fit([(a, b) for a, b, _ in X], y)
    with pytest.raises(InputError, match=r"fitted without scores"):
        plain.predict(X)
