"""``latentstruct explain``: the latent structure of one input pair, or a DISTRO model's
label matrix."""

from __future__ import annotations

import json

import numpy as np

from ..exceptions import ConfigError, InputError
from .common import load_for, parse_option

__all__ = ["cmd_explain"]


def cmd_explain(args) -> int:
    from ..data.path_rule import check_paths

    # before the heavy imports: a refused path is said at once
    check_paths({"--model": args.model}, {"--out": args.out}, regular={"--model"})
    from ..learners import LatentBinaryLearner

    from ..tasks import TASKS
    from ..tasks.contracts import EXPLAINABLE

    _check_png(args.out)
    task, learner = load_for(args.model, args.option, "explain")
    if getattr(learner, "registry_name", "") == "distro":
        return _explain_label_matrix(task, learner, args.out)
    # what the model cannot do comes first: --source/--target would not help
    explainable = sorted(n for n, c in TASKS.items() if EXPLAINABLE in c.offered_capabilities())
    if EXPLAINABLE not in task.offered_capabilities(task.get_params()):
        raise ConfigError(
            f"explain draws the latent structure of one input pair; task {task.name!r} cannot "
            f"(it is not explainable). Tasks explain supports: {', '.join(explainable)} (and "
            f"the label matrix of any distro model)"
        )
    if not callable(getattr(task, "encode_pair", None)):
        raise ConfigError(
            f"explain encodes one raw input pair with the task's encode_pair(source, target); "
            f"task {task.name!r} declares the explainable capability but has no encode_pair: "
            f"add one to {type(task).__name__} (docs/subclassing.md, 'explainable')")
    if not isinstance(learner, LatentBinaryLearner):
        raise ConfigError(
            f"explain draws a latent structure; this {task.name!r} model was trained with "
            f"{learner.registry_name!r}, which has none. Train it with one of: "
            f"lclr, two-stage, lclr-variant, latent-pa"
        )
    if args.source is None or args.target is None:
        raise ConfigError("explain draws the structure a model picks for one input pair; give "
                          "--source TEXT and --target TEXT")
    _check_pair(task, args.source, args.target)
    _check_lang(task, args.option)
    x = task.encode_pair(args.source, args.target)
    h = learner.latent_argmax([x])[0]
    score = float(learner.decision_function([x])[0])
    from ..plotting import draw_explanation  # lazy: matplotlib is imported only when drawing

    draw_explanation(task.structure_object().explain(x, learner.coef_, h), args.out,
                     title=f"{task.name} / {learner.registry_name}")
    print(json.dumps({"score": round(score, 6), "decision": 1 if score >= 0 else -1,
                      "alignment": [int(j) for j in h], "picture": str(args.out)}))
    return 0


def _check_pair(task, source, target) -> None:
    """``--source``/``--target`` through the task's own check of one in-memory pair
    (``make_dataset``, what ``PairClassifier`` and training data go through: a
    transliteration word with white space is refused), located by the flag instead of
    ``X[0][k]``."""
    try:
        task.make_dataset([(source, target)])
    except InputError as exc:
        text = str(exc)
        for k, flag in enumerate(("--source", "--target")):
            text = text.replace(f"X[0][{k}]", flag)
        raise InputError(text) from None


def _check_lang(task, options) -> None:
    """``--option lang=...`` on a transliteration model: the check ``evaluate`` runs on
    the default data ``lang`` picks (its script must be the model's), so explain refuses
    the mismatch evaluate refuses."""
    from ..tasks.translit import TransliterationTask

    given = {parse_option(text)[0] for text in options or []}
    if "lang" in given and isinstance(task, TransliterationTask):
        task.check_script(task.read(None, split="test"), command="explain")


def _check_png(out) -> None:
    """Refuse an ``--out`` that does not end in ``.png``: every picture is drawn as PNG,
    and PNG bytes in ``x.txt`` or ``x.pdf`` would be a file its name misdescribes."""
    from pathlib import Path

    path = Path(out)
    if path.suffix.lower() != ".png":
        fixed = path.with_suffix(".png") if path.suffix else f"{path}.png"
        raise ConfigError(f"--out {out}: explain draws a PNG picture, so the file must end in "
                          f".png; give --out {fixed}")


def _explain_label_matrix(task, learner, out) -> int:
    """A DISTRO model: draw its label similarities and singular values; print a summary."""
    from pathlib import Path

    out = Path(out)  # checked by cmd_explain before the model was loaded
    from ..plotting import draw_label_matrix  # lazy: matplotlib only when drawing

    A = learner.label_matrix_
    labels = list(task.labels_)
    order = draw_label_matrix(A, labels, out, singular_values=learner.singular_values_,
                              title=f"{task.name} / distro (d = {A.shape[0]})")
    sim = A.T @ A
    np.fill_diagonal(sim, -np.inf)
    pairs = np.dstack(np.unravel_index(np.argsort(-sim, axis=None), sim.shape))[0]
    closest = [[labels[i], labels[j], round(float(sim[i, j]), 4)] for i, j in pairs if i < j][:10]
    print(json.dumps({"n_components": int(A.shape[0]), "n_labels": len(labels),
                      "rank": int(learner.effective_rank_),
                      "singular_values": [round(float(v), 6) for v in learner.singular_values_],
                      "closest_labels": closest, "order": order, "picture": str(out)}))
    return 0
