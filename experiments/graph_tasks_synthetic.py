"""The graph tasks (issue 44, item 2) trained by the SSVM, the CRF, LCLR and J-LIS on small
synthetic grids, against trivial baselines: the figures of the closing note.

The grids and baselines are the test suite's (``tests/tasks/test_graph_tasks.py``, whose
slow tests assert on the same comparisons with margins); run from the repository root:

    python experiments/graph_tasks_synthetic.py
"""
import sys
import time
import warnings

import numpy as np
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "tasks"))
warnings.simplefilter("ignore")
from test_graph_tasks import (noisy_grids, unary_baseline, node_accuracy, featurized,
                              decision_problem, patch_problem)
from latentstruct.tasks.graph import GraphTask, GraphDecisionTask
from latentstruct.learners import StructuredSVM, CRF, LCLR, JLIS
rng = np.random.default_rng(0)
tr, te = noisy_grids(30, rng), noisy_grids(40, rng)
task = GraphTask(n_states=2); task.fit(task.make_dataset(*tr))
print("node-by-node baseline", round(unary_baseline(*te), 3))
t = time.time(); s = StructuredSVM(task, C=0.1, max_iter=30).fit(featurized(task, tr[0]), tr[1])
print("ssvm", round(node_accuracy(te[1], s.predict(featurized(task, te[0]))), 3), f"{time.time()-t:.1f}s")
t = time.time(); c = CRF(task, c2=1.0, max_iter=60, feature_set="all").fit(featurized(task, tr[0]), tr[1])
print("crf", round(node_accuracy(te[1], c.predict(featurized(task, te[0]))), 3), f"{time.time()-t:.1f}s")
rng = np.random.default_rng(3)
Xtr, ytr = patch_problem(40, rng); Xte, yte = patch_problem(40, rng)
dt = GraphDecisionTask(n_states=2); dt.fit(dt.make_dataset(Xtr, ytr))
t = time.time(); m = LCLR(dt, C=1.0, max_iter=20, init="zeros").fit(featurized(dt, Xtr), ytr)
print("lclr accuracy (baseline 0.5)", float(np.mean(m.predict(featurized(dt, Xte)) == yte)), f"{time.time()-t:.1f}s")
rng = np.random.default_rng(5)
Xs, Ys = noisy_grids(3, rng); Xb, yb, _ = decision_problem(30, rng); Xte, Yte = noisy_grids(40, rng)
task = GraphTask(n_states=2); task.fit(task.make_dataset(Xs + Xb, Ys + [None] * len(Xb)))
t = time.time(); j = JLIS(task, C1=1.0, C2=1.0, max_iter=10, random_tie_break=False).fit(featurized(task, Xs), Ys, featurized(task, Xb), yb)
y = np.concatenate(Yte); maj = max(y.mean(), 1 - y.mean())
print("jlis", round(node_accuracy(Yte, j.predict(featurized(task, Xte))), 3), "majority", round(maj, 3), "node-by-node", round(unary_baseline(Xte, Yte), 3), f"{time.time()-t:.1f}s")
s3 = StructuredSVM(task, C=1.0, max_iter=30).fit(featurized(task, Xs), Ys)
print("ssvm on the same 3 labelled grids", round(node_accuracy(Yte, s3.predict(featurized(task, Xte))), 3))
