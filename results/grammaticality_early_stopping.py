"""The LCLR-variant's validation run on grammaticality from zero weights, measured by class
(results/grammaticality_early_stopping.md): after every outer iteration, the held-out
squared hinge, accuracy and mean decision value of positives and negatives, and ||w||.

    LATENTSTRUCT_DATA=... python results/grammaticality_early_stopping.py N_TRAIN MAX_ITER OUT.json

The split, the initial weights and the loop are the learner's own (``_validation_split``,
``_initial_weights``, ``alternating_latent_fit``), so the curves equal the model's
``validation_loss_curve_`` and ``validation_scores_``.
"""
import json, os, sys, time
import numpy as np
from latentstruct.tasks.grammaticality.task import GrammaticalityTask
from latentstruct.learners.latent.lclr_variant import LCLRVariant
from latentstruct.learners.latent.alternating import alternating_latent_fit
from latentstruct.pipelines import attach_tagger

n = int(sys.argv[1]); T = int(sys.argv[2]); out = sys.argv[3]
S = os.path.join(os.environ["LATENTSTRUCT_DATA"], "english_sentences", "reuters21578_sentences.txt")
task = GrammaticalityTask(n_train=n)
attach_tagger(task)
ds = task.training_sample(task.read(S, split="train"))
task.fit(ds)
X = task.featurize(ds); y = np.asarray(task.encode_targets(ds.targets), float)
lr = LCLRVariant(task, init="zeros", max_iter=T, tol=None, early_stopping=True)
train, val = lr._validation_split(y)
Xv, yv = task.subset(X, val), y[val]
rows = []
t0 = time.perf_counter()
def after(it, w):
    f = task.decision_batch(Xv, w)
    h = np.maximum(0.0, 1.0 - yv * f) ** 2
    pos, neg = yv > 0, yv < 0
    pred = np.where(f >= 0, 1.0, -1.0)
    r = dict(it=it, secs=round(time.perf_counter() - t0, 1), hinge=float(h.mean()),
             hinge_pos=float(h[pos].mean()), hinge_neg=float(h[neg].mean()),
             acc=float((pred == yv).mean()), acc_pos=float((pred[pos] == 1).mean()),
             acc_neg=float((pred[neg] == -1).mean()), f_pos=float(f[pos].mean()),
             f_neg=float(f[neg].mean()), f_sd=float(f.std()), wnorm=float(np.linalg.norm(w)),
             # share of the hinge from wrongly classified examples, and their mean loss
             hinge_wrong_share=float(h[pred != yv].sum() / max(h.sum(), 1e-12)),
             loss_wrong=float(h[pred != yv].mean()) if (pred != yv).any() else 0.0)
    rows.append(r); print(json.dumps(r), flush=True)
    return False
Xt, yt = task.subset(X, train), y[train]
w0 = lr._initial_weights(task, Xt, yt)
alternating_latent_fit(lr, task, Xt, yt, 1.0, w0, desc="diag", monotone=False, after_iteration=after)
json.dump(rows, open(out, "w"), indent=1)
