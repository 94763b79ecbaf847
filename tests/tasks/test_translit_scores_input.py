"""A user's character-pair scores as alignment features of transliteration (issue 43).

Examples given as ``(source, target, scores)``: score q of cell (i, j) is a real feature of
aligning source character i with target character j (the last k weights); a toy where only
the scores separate the classes is learned by LCLR and the two-stage baseline; bad scores are
InputErrors naming the example and the cell; a model records ``n_pair_scores_``, survives
save/load and refuses the other input form; ``check_task`` passes on a scored task.
"""

import warnings

import numpy as np
import pytest

import latentstruct
from latentstruct.exceptions import ConvergenceWarning, InputError
from latentstruct.learners import LCLR, TwoStage
from latentstruct.tasks import TransliterationTask
from latentstruct.testing import all_alignments, check_task

WORDS = [("ab", "xy"), ("ba", "yx"), ("abc", "xyx"), ("ca", "yx"), ("bca", "xxy"), ("cab", "yxy")]


def diag(a, b, value=1.0):
    S = np.zeros((len(a), len(b)))
    for i in range(min(len(a), len(b))):
        S[i, i] = value
    return S


def toy():
    """Every pair twice: +1 with score 1 on the diagonal, -1 with all scores 0, so the
    characters alone cannot separate the classes and the scores can."""
    X, y = [], []
    for a, b in WORDS:
        X += [(a, b, diag(a, b)), (a, b, np.zeros((len(a), len(b))))]
        y += [1, -1]
    return X, np.array(y)


def fitted(X, y, **params):
    task = TransliterationTask(**params)
    task.fit(task.make_dataset(X, y))
    return task, task.featurize(task.make_dataset(X, y))


def test_scores_are_the_last_weights_and_features():
    X = [("ab", "xy", np.full((2, 2, 2), 0.5))]
    task, F = fitted(X, [1], bigrams=False)
    assert task.n_pair_scores_ == 2
    assert task.structure_.feature_blocks()["scores"] == (task.n_features - 2, (2,))
    w = np.zeros(task.n_features)
    w[-2:] = [1.0, 3.0]
    np.testing.assert_allclose(task.structure_.cell_scores(F[0], w), np.full((2, 2), 2.0))
    phi = task.structure_.latent_feature(F[0], np.array([0, 1]))
    assert phi.dot(w) == pytest.approx(4.0)
    assert task.structure_.decision_batch(F, w)[0] == pytest.approx(4.0)
    # the subset and the join keep each pair's scores
    both = task.structure_.as_batch([F[0], F[0]])
    assert both.n_scores == 2 and len(both.pair_scores) == 2


@pytest.mark.parametrize("learner", [LCLR, TwoStage])
def test_only_the_scores_separate_and_they_are_learned(learner):
    X, y = toy()
    task, F = fitted(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = learner(task, C=10.0).fit(F, y)
    assert float(np.mean(model.predict(F) == y)) == 1.0
    assert model.coef_[-1] > 0
    # no scores for the ranking's cross pairs: binary accuracy only
    assert task.evaluate_model(task.make_dataset(X, y), model.predict,
                               model.decision_function) == {"accuracy": 1.0}
    # without the scores the two copies of a pair are the same input: chance at best
    Xp = [(a, b) for a, b, _ in X]
    plain, Fp = fitted(Xp, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        acc_plain = float(np.mean(learner(plain, C=10.0).fit(Fp, y).predict(Fp) == y))
    assert acc_plain <= 0.5


def test_heuristic_weights_give_the_scores_one_over_k():
    task, _ = fitted([("ab", "xy", np.zeros((2, 2, 4)))], [1])
    np.testing.assert_allclose(task.structure_.heuristic_weights()[-4:], 0.25)


def test_check_task_passes_with_scores():
    X, y = toy()
    rng = np.random.default_rng(0)
    Xr = [(a, b, rng.normal(size=(len(a), len(b), 2))) for a, b, _ in X[:4]]
    task, _ = fitted(Xr, y[:4], bigrams=True)
    check_task(task, task.make_dataset(Xr, y[:4]),
               enumerate=lambda x: all_alignments(x.source_ids(0).shape[0],
                                                  x.target_ids(0).shape[0]))


def test_errors_name_the_example_and_the_cell():
    task = TransliterationTask()
    S = np.zeros((2, 2))
    S[1, 0] = np.inf
    with pytest.raises(InputError, match=r"X\[1\]\[2\]\[1, 0\] is inf"):
        task.make_dataset([("ab", "xy", np.zeros((2, 2))), ("ab", "xy", S)])
    with pytest.raises(InputError, match=r"X\[0\]\[2\]\[0, 1, 1\] is nan"):
        task.make_dataset([("ab", "xy", np.array([[[0, 0], [0, np.nan]]] * 2))])
    with pytest.raises(InputError, match=r"X\[1\] has 2 character-pair scores per cell but "
                                         r"X\[0\] has 1"):
        task.make_dataset([("ab", "xy", np.zeros((2, 2))), ("ab", "xy", np.zeros((2, 2, 2)))])
    with pytest.raises(InputError, match=r"X\[1\] has no character-pair scores"):
        task.make_dataset([("ab", "xy", np.zeros((2, 2))), ("ab", "xy")])
    with pytest.raises(InputError, match=r"X\[0\]\[2\]: the character-pair scores have shape "
                                         r"\(3, 2\) but the pair has 2 x 2 characters "
                                         r"\(\['a', 'b'\] x \['x', 'y'\]\)"):
        task.make_dataset([("AB", "xy", np.zeros((3, 2)))])
    with pytest.raises(InputError, match=r"f returned shape \(1, 1\) for X\[0\]"):
        task.with_pair_scores([("ab", "xy")], lambda a, b: np.zeros((1, 1)))
    assert task.with_pair_scores([("Ab", "xyz")], lambda a, b: diag(a, b))[0][2].shape == (2, 3)


def test_save_load_round_trip_and_refusals(tmp_path):
    X, y = toy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est = latentstruct.Estimator(task="translit", C=10.0).fit(X, y)
    assert est.score(X, y) == 1.0
    path = tmp_path / "m.npz"
    est.save(path)
    back = latentstruct.load(path)
    assert back.task_.n_pair_scores_ == 1
    state, arrays = back.task_.get_state()
    del state["n_pair_scores"]  # a model file from before issue 43
    assert type(back.task_).from_state(back.task_.get_params(), state, arrays).n_pair_scores_ == 0
    np.testing.assert_array_equal(back.predict(X), est.predict(X))
    np.testing.assert_allclose(back.decision_function(X), est.decision_function(X))
    with pytest.raises(InputError, match=r"fitted with 1 character-pair score\(s\).*with_pair_scores"):
        back.predict([(a, b) for a, b, _ in X])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        plain = latentstruct.Estimator(task="translit").fit([(a, b) for a, b, _ in X], y)
    assert plain.task_.n_pair_scores_ == 0
    with pytest.raises(InputError, match=r"fitted without scores"):
        plain.predict(X)
