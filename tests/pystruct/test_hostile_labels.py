"""Labels, edges and feature values that must not trick the PyStruct layer (issue 51).

* Integer-valued float labels are read as the integers they are, once, where they come in
  (``fit``, ``score``): every learner on every model trains exactly as on int labels.
* ``score`` and ``loss`` check labels as ``fit`` does (node count, state range, dtype),
  naming the example, instead of numpy's ``IndexError`` or broadcast error.
* A bool edge array is refused (True/False would be read as nodes 1 and 0).
* A finite but huge feature value (1e300) is refused up front, naming the example and the
  position, instead of ending in a HiGHS status error deep inside training.
"""

from __future__ import annotations

import numpy as np
import pytest

from latentstruct.exceptions import InputError
from latentstruct.pystruct.learners import (FrankWolfeSSVM, LatentSSVM, NSlackSSVM,
                                            OneSlackSSVM, PrimalDSStructuredSVM,
                                            SquaredHingeSSVM, StructuredPerceptron,
                                            SubgradientLatentSSVM, SubgradientSSVM)
from latentstruct.pystruct.models import (BinaryClf, ChainCRF, EdgeFeatureGraphCRF, GraphCRF,
                                          GridCRF, LatentGraphCRF, LatentNodeCRF,
                                          MultiClassClf, MultiLabelClf,
                                          NodeTypeEdgeFeatureGraphCRF)

EDGES = np.array([[0, 1], [1, 2]])


def one_line(err) -> str:
    message = str(err.value)
    assert "\n" not in message
    return message


def graph_data(n=4, seed=0):
    """Small chains whose labels follow the first feature's sign (learnable)."""
    rng = np.random.RandomState(seed)
    X, Y = [], []
    for _ in range(n):
        y = rng.randint(0, 2, size=3)
        features = np.column_stack([2.0 * y - 1 + 0.3 * rng.randn(3), rng.randn(3)])
        X.append((features, EDGES))
        Y.append(y)
    return X, Y


def as_floats(Y):
    return [np.asarray(y, dtype=np.float64) for y in Y]


# -- 1. integer-valued float labels: the same training as int labels ----------------------
LEARNERS = {
    "one-slack": lambda m: OneSlackSSVM(m, max_iter=5, C=1.0),
    "n-slack": lambda m: NSlackSSVM(m, max_iter=5, C=1.0),
    "frank-wolfe": lambda m: FrankWolfeSSVM(m, max_iter=5, C=1.0, random_state=0),
    "frank-wolfe-batch": lambda m: FrankWolfeSSVM(m, max_iter=5, C=1.0, batch_mode=True),
    "subgradient": lambda m: SubgradientSSVM(m, max_iter=5, C=1.0),
    "perceptron": lambda m: StructuredPerceptron(m, max_iter=5),
    "primal-ds": lambda m: PrimalDSStructuredSVM(m, max_iter=20, C=1.0),
    "squared-hinge": lambda m: SquaredHingeSSVM(m, max_iter=5, C=1.0),
}


def graph_examples(name):
    """(model factory, X, Y) for each CRF, Y int labels."""
    X, Y = graph_data()
    if name == "graph":
        return lambda: GraphCRF(inference_method="max-product"), X, Y
    if name == "chain":
        return lambda: ChainCRF(), [x[0] for x in X], Y
    if name == "grid":
        return (lambda: GridCRF(inference_method="max-product"),
                [x[0].reshape(1, 3, 2) for x in X], [y.reshape(1, 3) for y in Y])
    if name == "edge-feature":
        return (lambda: EdgeFeatureGraphCRF(inference_method="max-product"),
                [(x[0], EDGES, np.ones((2, 1))) for x in X], Y)
    raise AssertionError(name)


@pytest.mark.parametrize("learner", sorted(LEARNERS))
@pytest.mark.parametrize("model", ["graph", "chain", "grid", "edge-feature"])
def test_every_learner_trains_on_integral_float_labels_as_on_ints(learner, model):
    make_model, X, Y = graph_examples(model)
    with_ints = LEARNERS[learner](make_model()).fit(X, Y)
    with_floats = LEARNERS[learner](make_model()).fit(X, as_floats(Y))
    np.testing.assert_allclose(with_floats.w, with_ints.w)
    assert with_floats.score(X, as_floats(Y)) == with_ints.score(X, Y)


def test_unstructured_models_train_on_integral_float_labels_as_on_ints():
    rng = np.random.RandomState(0)
    X = rng.randn(12, 3)
    classes = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0).astype(int)
    for make_model, Y in [
        (lambda: MultiClassClf(), classes),
        (lambda: BinaryClf(), np.where(X[:, 0] > 0, 1, -1)),
        (lambda: MultiLabelClf(), (X[:, :2] > 0).astype(int)),
    ]:
        with_ints = OneSlackSSVM(make_model(), max_iter=10).fit(X, Y)
        with_floats = OneSlackSSVM(make_model(), max_iter=10).fit(X, Y.astype(np.float64))
        np.testing.assert_allclose(with_floats.w, with_ints.w)
        assert with_floats.score(X, Y.astype(np.float64)) == with_ints.score(X, Y)


def test_latent_learners_train_on_integral_float_labels_as_on_ints():
    X, Y = graph_data(6)
    X = [(np.hstack([x[0], np.ones((3, 1))]), x[1]) for x in X]
    for make in [lambda: LatentSSVM(OneSlackSSVM(LatentGraphCRF(n_states_per_label=2),
                                                 max_iter=5), latent_iter=2),
                 lambda: SubgradientLatentSSVM(LatentGraphCRF(n_states_per_label=2),
                                               max_iter=3)]:
        with_ints = make().fit(X, Y)
        with_floats = make().fit(X, as_floats(Y))
        np.testing.assert_allclose(with_floats.w, with_ints.w)
        assert with_floats.score(X, as_floats(Y)) == with_ints.score(X, Y)


def test_latent_node_crf_takes_integral_float_states():
    X, Y = graph_data(4)
    # one hidden node joined to the first visible one
    Xh = [(x[0], np.vstack([EDGES, [[0, 3]]]), 1) for x in X]
    H = [np.append(y, 2) for y in Y]
    make = lambda: OneSlackSSVM(LatentNodeCRF(n_labels=2, n_hidden_states=1,  # noqa: E731
                                              n_features=2), max_iter=5)
    with_ints = make().fit(Xh, H, initialize=False)
    with_floats = make().fit(Xh, as_floats(H), initialize=False)
    np.testing.assert_allclose(with_floats.w, with_ints.w)


def test_node_type_crf_takes_integral_float_labels():
    rng = np.random.RandomState(0)
    model = lambda: NodeTypeEdgeFeatureGraphCRF(  # noqa: E731
        2, [2, 2], [2, 1], np.array([[1, 1], [1, 1]]), inference_method="max-product")
    X, Y = [], []
    for _ in range(3):
        feats = [rng.randn(2, 2), rng.randn(1, 1)]
        edges = [np.array([[0, 1]]), np.array([[0, 0]]), None, None]
        edge_feats = [np.ones((1, 1)), np.ones((1, 1)), None, None]
        X.append((feats, edges, edge_feats))
        Y.append(np.array([rng.randint(2), rng.randint(2), 2 + rng.randint(2)]))
    with_ints = OneSlackSSVM(model(), max_iter=5).fit(X, Y)
    with_floats = OneSlackSSVM(model(), max_iter=5).fit(X, as_floats(Y))
    np.testing.assert_allclose(with_floats.w, with_ints.w)


@pytest.mark.parametrize("learner", ["one-slack", "frank-wolfe", "subgradient", "perceptron"])
def test_non_integral_float_labels_are_refused_naming_the_example(learner):
    X, Y = graph_data()
    Y = as_floats(Y)
    Y[2][1] = 0.5
    with pytest.raises(InputError, match=r"^X\[2\]: y must hold integer state indices"):
        LEARNERS[learner](GraphCRF()).fit(X, Y)


def test_labels_are_checked_when_fit_does_not_initialize():
    # initialize=False skips the model's own pass over the data: the learner still checks
    X, Y = graph_data()
    Y[1] = np.array([0, 1, 7])
    model = GraphCRF(n_states=2, n_features=2, inference_method="max-product")
    with pytest.raises(InputError) as err:
        OneSlackSSVM(model, max_iter=3).fit(X, Y, initialize=False)
    assert one_line(err).startswith("Y[1]: y[2] = 7 is not a state of a model with "
                                    "n_states=2 (expected 0..1)")


def test_latent_ssvm_checks_h_init():
    X, Y = graph_data()
    X = [(np.hstack([x[0], np.ones((3, 1))]), x[1]) for x in X]
    H = [np.asarray(y) * 2 for y in Y]
    H[3] = np.array([0, 1])
    learner = LatentSSVM(OneSlackSSVM(LatentGraphCRF(n_states_per_label=2), max_iter=3))
    with pytest.raises(InputError) as err:
        learner.fit(X, Y, H_init=H)
    assert one_line(err).startswith("H_init[3]: y has 2 labels but the example has 3 nodes")


# -- 2. score and loss check labels as fit does --------------------------------------------
@pytest.fixture(scope="module")
def fitted():
    X, Y = graph_data()
    return OneSlackSSVM(GraphCRF(inference_method="max-product"), max_iter=5).fit(X, Y), X, Y


def test_score_refuses_a_state_out_of_range_naming_the_example(fitted):
    learner, X, Y = fitted
    bad = list(Y)
    bad[1] = np.array([0, 5, 0])
    with pytest.raises(InputError) as err:
        learner.score(X[:2], bad[:2])
    assert one_line(err) == ("Y[1]: y[1] = 5 is not a state of a model with n_states=2 "
                             "(expected 0..1)")


def test_score_refuses_a_labelling_of_the_wrong_length(fitted):
    learner, X, Y = fitted
    bad = list(Y)
    bad[1] = np.array([0, 1])
    with pytest.raises(InputError) as err:
        learner.score(X[:2], bad[:2])
    assert one_line(err) == ("Y[1]: y has 2 labels but the example has 3 nodes; give one "
                             "label per node")


def test_score_refuses_non_integer_labels_and_a_count_mismatch(fitted):
    learner, X, Y = fitted
    with pytest.raises(InputError, match=r"^Y\[0\]: y must hold integer state indices"):
        learner.score(X[:1], [np.array(["a", "b", "a"])])
    with pytest.raises(InputError, match=r"^score: 2 inputs X but 1 labels Y"):
        learner.score(X[:2], Y[:1])


def test_score_with_integral_float_labels_is_the_int_score(fitted):
    learner, X, Y = fitted
    assert learner.score(X, as_floats(Y)) == learner.score(X, Y)


def test_latent_scores_check_labels(fitted):
    X, Y = graph_data()
    X = [(np.hstack([x[0], np.ones((3, 1))]), x[1]) for x in X]
    for learner in [LatentSSVM(OneSlackSSVM(LatentGraphCRF(n_states_per_label=2), max_iter=3),
                               latent_iter=1),
                    SubgradientLatentSSVM(LatentGraphCRF(n_states_per_label=2), max_iter=2)]:
        learner.fit(X, Y)
        with pytest.raises(InputError) as err:
            learner.score(X[:2], [Y[0], np.array([0, 1])])
        assert one_line(err).startswith("Y[1]: y has 2 labels but the example has 3 nodes")
        # labels, not states: 3 is a state of the model but not one of its 2 labels
        with pytest.raises(InputError, match=r"^Y\[0\]: y\[0\] = 3 is not a state of a "
                                             r"model with n_states=2"):
            learner.score(X[:1], [np.array([3, 0, 0])])


def test_model_loss_checks_its_labellings():
    model = GraphCRF(n_states=2, n_features=2)
    with pytest.raises(InputError) as err:
        model.loss(np.array([0, 5, 0]), np.array([0, 1, 0]))
    assert one_line(err) == ("loss: y[1] = 5 is not a state of a model with n_states=2 "
                             "(expected 0..1)")
    with pytest.raises(InputError) as err:
        model.loss(np.array([0, 1]), np.array([0, 1, 0]))
    assert one_line(err) == ("loss: y has 2 labels but y_hat has 3; compare two labellings "
                             "of the same example")
    with pytest.raises(InputError, match=r"^loss: y_hat must hold integer state indices"):
        model.loss(np.array([0, 1, 0]), np.array([0, 0.5, 0]))
    assert model.loss(np.array([0., 1., 1.]), np.array([0, 1, 0])) == 1.0
    with pytest.raises(InputError, match=r"^max_loss: y\[0\] = -1 is not a state"):
        model.max_loss(np.array([-1, 0]))
    with pytest.raises(InputError, match=r"^continuous_loss: y_hat's marginals have shape "
                                         r"\(2, 2\) but y has 3 labels"):
        model.loss(np.array([0, 1, 0]), (np.full((2, 2), 0.5), None))


def test_grid_loss_compares_a_flat_labelling_with_a_grid_prediction():
    model = GridCRF(n_states=2, n_features=1)
    # before: (4,) against (2, 2) broadcast to a (2, 4) comparison and a wrong loss
    assert model.loss(np.array([0, 1, 1, 0]), np.array([[0, 1], [0, 0]])) == 1.0


def test_latent_models_loss_checks_states():
    model = LatentGraphCRF(n_labels=2, n_features=2, n_states_per_label=2)
    with pytest.raises(InputError, match=r"^loss: y\[0\] = 4 is not a state of a model "
                                         r"with n_states=4"):
        model.loss(np.array([4, 0]), np.array([0, 0]))
    assert model.loss(np.array([2., 0.]), np.array([3, 1])) == 0.0
    node = LatentNodeCRF(n_labels=2, n_hidden_states=1, n_features=2)
    with pytest.raises(InputError, match=r"^loss: h must hold integer state indices"):
        node.loss(np.array([0.5, 1]), np.array([0, 1]))
    assert node.loss(np.array([0., 1., 2.]), np.array([0, 0, 2])) == 1.0


def test_unstructured_losses_check_their_labels():
    clf = MultiClassClf(n_features=2, n_classes=3)
    with pytest.raises(InputError) as err:
        clf.loss(5, 0)
    assert one_line(err) == ("loss: y = 5 is not a class of a model with n_classes=3 "
                             "(expected 0..2)")
    with pytest.raises(InputError, match=r"^loss: y_hat = 1\.5 is not an integer label"):
        clf.loss(1, 1.5)
    assert clf.loss(2.0, 2) == 0.0
    with pytest.raises(InputError, match=r"^y = 1\.5 is not an integer label"):
        clf.joint_feature(np.ones(2), 1.5)
    binary = BinaryClf(n_features=2)
    with pytest.raises(InputError, match=r"^loss: y = 0: BinaryClf labels are -1 and \+1"):
        binary.loss(0, 1)
    assert binary.loss(-1.0, -1) == 0.0
    multi = MultiLabelClf(n_labels=2, n_features=2)
    with pytest.raises(InputError, match=r"^loss: y\[1\] = 2 is not a state"):
        multi.loss(np.array([0, 2]), np.array([0, 1]))


def test_unstructured_score_names_the_bad_label():
    rng = np.random.RandomState(0)
    X = rng.randn(6, 2)
    Y = np.array([0, 1, 2, 0, 1, 2])
    learner = OneSlackSSVM(MultiClassClf(), max_iter=3).fit(X, Y)
    with pytest.raises(InputError) as err:
        learner.score(X, np.array([0, 1, 2, 0, 1, 3]))
    assert one_line(err) == ("Y[5] = 3 is not a class of a model with n_classes=3 "
                             "(expected 0..2)")


# -- 3. bool edges are not node indices ----------------------------------------------------
BOOL_EDGES = np.array([[True, False]])


def test_models_refuse_bool_edges():
    features = np.zeros((3, 2))
    message = (r"^X\[0\]: edges must hold integer node indices, got dtype bool; give the "
               r"node pairs as integers")
    with pytest.raises(InputError, match=message) as err:
        GraphCRF().initialize([(features, BOOL_EDGES)], [np.array([0, 1, 0])])
    one_line(err)
    with pytest.raises(InputError, match=r"^x: edges must hold integer node indices, got "
                                         r"dtype bool"):
        GraphCRF(n_states=2, n_features=2).inference((features, BOOL_EDGES), np.zeros(7))
    with pytest.raises(InputError, match=r"^MultiLabelClf: edges must hold integer node "
                                         r"indices, got dtype bool"):
        MultiLabelClf(n_labels=2, n_features=2, edges=BOOL_EDGES).joint_feature(
            np.zeros(2), np.array([0, 1]))


def test_inference_and_graph_helpers_refuse_bool_edges():
    from latentstruct.pystruct.inference import inference_dispatch, is_chain, is_forest
    from latentstruct.pystruct.models.latent_graph_crf import kmeans_init

    unary, pairwise = np.zeros((2, 2)), np.eye(2)
    with pytest.raises(InputError, match=r"^edges must hold integer node indices; got dtype "
                                         r"bool"):
        inference_dispatch(unary, pairwise, BOOL_EDGES, "max-product")
    for helper in (lambda: is_forest(BOOL_EDGES), lambda: is_chain(BOOL_EDGES, 2)):
        with pytest.raises(InputError, match=r"got dtype bool"):
            helper()
    with pytest.raises(InputError, match=r"^X\[0\]: edges must hold integer node indices, "
                                         r"got dtype bool"):
        kmeans_init([np.zeros((2, 1))], [np.array([0, 1])], [BOOL_EDGES], 2, 1)


def test_graph_task_refuses_bool_edges():
    from latentstruct.tasks.graph import GraphTask

    with pytest.raises(InputError, match=r"^X\[0\]: edges must hold integer node indices; "
                                         r"got dtype bool") as err:
        GraphTask().make_dataset([(np.zeros((2, 2)), BOOL_EDGES)], [[0, 1]])
    one_line(err)


def test_graph_task_loss_refuses_labellings_of_different_lengths():
    from latentstruct.tasks.graph.structure import GraphLayout, GraphStructure

    with pytest.raises(InputError) as err:  # the loss is the graph task's structure's
        GraphStructure(GraphLayout(2, 1, 0)).loss(np.array([0, 1]), np.array([0, 1, 1]))
    assert one_line(err) == ("loss: y_true has 2 states but y_pred has 3; compare two "
                             "labellings of the same graph")


def test_kmeans_init_names_features_that_do_not_fit_the_labels():
    from latentstruct.pystruct.models.latent_graph_crf import kmeans_init

    with pytest.raises(InputError, match=r"^X\[0\]: 5 feature values do not give each of "
                                         r"the 2 labelled nodes a row"):
        kmeans_init([np.zeros(5)], [np.array([0, 1])], [np.array([[0, 1]])], 2, 1)


# -- 4. finite but huge feature values are refused up front -----------------------------
LIMIT = "latentstruct.limits.MAX_ATTRIBUTE_VALUE"


def huge(shape, pos, value=1e300):
    arr = np.zeros(shape)
    arr[pos] = value
    return arr


def test_graph_crf_refuses_a_huge_feature_naming_example_and_position():
    X, Y = graph_data()
    X[2] = (huge((3, 2), (1, 1)), EDGES)
    with pytest.raises(InputError) as err:
        OneSlackSSVM(GraphCRF(inference_method="lp")).fit(X, Y)
    assert one_line(err) == (
        f"X[2]: features[1, 1] = 1e+300 is too large; a feature's value scales its weights "
        f"in every score, so its magnitude must be at most 1e+06 ({LIMIT}): scale large "
        f"features (a log, a z-score)")
    # at inference too (a model fitted on sane data meeting a hostile x)
    model = GraphCRF(n_states=2, n_features=2, inference_method="lp")
    with pytest.raises(InputError, match=r"^x: features\[0, 1\] = -1e\+300 is too large"):
        model.inference((huge((3, 2), (0, 1), -1e300), EDGES), np.ones(7))


def test_huge_edge_features_are_refused():
    X = [(np.zeros((3, 2)), EDGES, huge((2, 1), (1, 0), 1e7))]
    with pytest.raises(InputError, match=r"^X\[0\]: edge_features\[1, 0\] = 10000000\.0 is "
                                         r"too large"):
        EdgeFeatureGraphCRF().initialize(X, [np.array([0, 1, 0])])
    with pytest.raises(InputError, match=r"^X\[0\]: features\[0, 0\] = 1e\+300 is too large "
                                         r"\(2 more such values\)"):
        ChainCRF().initialize([np.full((3, 1), 1e300)], [np.array([0, 1, 0])])


def test_unstructured_models_keep_huge_finite_features_for_pystructs_perceptron():
    # PyStruct's own suite (test_perceptron.test_overflow_averaged) trains on the largest
    # double: the unstructured models refuse only NaN and inf
    X, Y = np.array([[np.finfo("d").max]]), np.array([-1])
    learner = StructuredPerceptron(BinaryClf(n_features=1), max_iter=2, average=True)
    assert np.isfinite(learner.fit(X, Y).w[0])
    with pytest.raises(InputError, match=r"^X: X\[0, 0\] = inf is not finite"):
        MultiClassClf().initialize(np.array([[np.inf]]), np.array([0]))


@pytest.mark.parametrize("learner, value, constraint", [
    (OneSlackSSVM, 1e300, 0), (NSlackSSVM, 1e300, 2), (NSlackSSVM, 1e8, 2)])
def test_qp_learners_refuse_features_too_large_for_highs(learner, value, constraint):
    rng = np.random.RandomState(0)
    X = rng.randn(6, 2)
    Y = np.where(X[:, 0] > 0, 1, -1)
    X[2, 1] = value
    with pytest.raises(InputError) as err:
        learner(BinaryClf(), max_iter=5).fit(X, Y)
    assert one_line(err) == (
        f"the QP over the working set failed: constraint {constraint}'s joint-feature "
        f"difference is {value:.3g} at w[1], and HiGHS accepts coefficients (here its "
        f"square) up to 1e+15, so the examples' feature values are too large; scale the "
        f"features (a log, a z-score), e.g. to magnitudes of at most 1e+06 ({LIMIT})")


def test_refuse_oversized_leaves_other_solver_failures_to_the_caller():
    from latentstruct.solvers.qp import refuse_oversized

    assert refuse_oversized(np.full((2, 3), 3e7)) is None
    assert refuse_oversized(np.zeros((0, 3))) is None
    with pytest.raises(InputError, match=r"constraint 1's joint-feature difference is inf "
                                         r"at w\[0\]"):
        refuse_oversized(np.array([[1.0, 2.0], [np.nan, 0.0]]))


def test_the_limit_itself_is_accepted():
    # 1e6 is the bound, not beyond it: PyStruct-sized data (pixels, counts) stays far below
    X, Y = graph_data()
    X[0][0][0, 1], X[1][0][2, 1] = 1e6, -1e6
    learner = OneSlackSSVM(GraphCRF(inference_method="max-product"), max_iter=3).fit(X, Y)
    assert np.all(np.isfinite(learner.w))
    X[1][0][2, 1] = np.nextafter(-1e6, -np.inf)
    with pytest.raises(InputError, match=r"^X\[1\]: features\[2, 1\] = -1000000\.0000000001 "
                                         r"is too large"):
        OneSlackSSVM(GraphCRF()).fit(X, Y)


def test_graph_task_refuses_huge_node_and_edge_features():
    from latentstruct.tasks.graph import GraphTask

    task = GraphTask(n_states=2)
    with pytest.raises(InputError) as err:
        task.make_dataset([(np.zeros((2, 2)), [[0, 1]]), (huge((2, 2), (1, 0)), [[0, 1]])])
    assert one_line(err) == (
        f"X[1]: node_features[1, 0] = 1e+300 is too large; a feature's value scales its "
        f"weights in every score, so its magnitude must be at most 1e+06 ({LIMIT}): scale "
        f"large features (a log, a z-score)")
    with pytest.raises(InputError, match=r"^X\[0\]: edge_features\[0, 1\] = -1e\+300 is too "
                                         r"large"):
        task.make_dataset([(np.zeros((2, 2)), [[0, 1]], huge((1, 2), (0, 1), -1e300))])
    # and at prediction: the fitted task's featurize meets the same check
    task.fit(task.make_dataset([(np.ones((2, 2)), [[0, 1]])], [[0, 1]]))
    with pytest.raises(InputError, match=r"^X\[0\]: node_features\[0, 0\] = 1e\+300"):
        task.featurize(task.make_dataset([(huge((2, 2), (0, 0)), [[0, 1]])]))
