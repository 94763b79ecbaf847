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
    check_paths({"--model": args.model, "--input": args.input}, {"--out": args.out},
                regular={"--model"}, stdin={"--input"})
    _check_suffix(args.out)
    from ..learners import LatentBinaryLearner

    from ..tasks import TASKS
    from ..tasks.contracts import EXPLAINABLE
    from ..tasks.sequence import SequenceLabellingTask

    task, learner = load_for(args.model, args.option, "explain")
    if getattr(learner, "registry_name", "") == "distro":
        _check_png(args.out)
        return _explain_label_matrix(task, learner, args.out)
    if isinstance(task, SequenceLabellingTask):
        return _explain_sequences(args, task, learner)
    _check_png(args.out)
    # what the model cannot do comes first: --source/--target would not help
    explainable = sorted(n for n, c in TASKS.items() if EXPLAINABLE in c.offered_capabilities())
    if EXPLAINABLE not in task.offered_capabilities(task.get_params()):
        raise ConfigError(
            f"explain draws the latent structure of one input pair; task {task.name!r} cannot "
            f"(it is not explainable). Tasks explain supports: {', '.join(explainable)}, the "
            f"sequence models ({', '.join(_sequence_tasks())}: their predictions, with "
            f"--input) and the label matrix of any distro model"
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


def _sequence_tasks() -> list[str]:
    from ..tasks import TASKS
    from ..tasks.sequence import SequenceLabellingTask

    return sorted(n for n, c in TASKS.items() if issubclass(c, SequenceLabellingTask))


def _check_suffix(out) -> None:
    """An ``--out`` explain can write: a .png picture, or a sequence model's .html or .txt
    explanation."""
    from pathlib import Path

    if out is not None and Path(out).suffix.lower() not in (".png", ".html", ".txt"):
        raise ConfigError(f"--out {out}: explain writes a .png picture (pair and distro "
                          f"models) or a .html or .txt explanation (sequence models); give a "
                          f"file name ending in one of them")


def _explain_sequences(args, task, learner) -> int:
    """A sequence model's explanations of the sentences of ``--input`` (or of its weights,
    ``--weights``), as text or as an HTML page."""
    from dataclasses import replace
    from pathlib import Path

    from ..data.atomic import atomic_write
    from ..estimators.explain import explain_records, explain_weights

    if args.source is not None or args.target is not None:
        raise ConfigError(f"--source/--target give a pair model its input pair; {args.model} is "
                          f"a {task.name!r} model: give --input FILE (its sentences)")
    if args.out is not None and Path(args.out).suffix.lower() == ".png":
        raise ConfigError(f"--out {args.out}: a sequence model's explanation is text or HTML; "
                          f"give a .txt or .html file, or no --out for standard output")
    if args.weights:
        if args.input is not None or args.sentence is not None:
            raise ConfigError("--weights explains the model, not sentences: drop --input and "
                              "--sentence")
        if args.top < 1:
            raise ConfigError(f"--top must be at least 1, got {args.top}")
        items = [explain_weights(task, learner, top=args.top)]
    else:
        if args.input is None:
            raise ConfigError(f"explain needs --input FILE with the sentences to explain ({task.name} "
                              f"input format), or --weights for what the model learned")
        dataset = task.read(args.input, split="test")
        if args.sentence is not None:
            if not 0 <= args.sentence < len(dataset.records):
                raise ConfigError(f"--sentence {args.sentence}: {args.input} has "
                                  f"{len(dataset.records)} sentences (0 to "
                                  f"{len(dataset.records) - 1})")
            k = args.sentence
            dataset = replace(dataset, records=dataset.records[k:k + 1],
                              targets=dataset.targets[k:k + 1])
        items = explain_records(task, learner, dataset)
    html = args.out is not None and Path(args.out).suffix.lower() == ".html"
    if html:
        body = "\n".join(item._repr_html_() for item in items)
        text = (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>latentstruct "
                f"explain</title></head><body>{body}</body></html>\n")
    else:
        first = 0 if args.sentence is None else args.sentence
        text = "\n\n".join(str(item) if args.weights else f"sentence {first + i}\n{item}"
                             for i, item in enumerate(items)) + "\n"
    if args.out is None:
        print(text, end="")
    else:
        with atomic_write(args.out, "w") as fh:
            fh.write(text)
    return 0


def _check_png(out) -> None:
    """Refuse an ``--out`` that does not end in ``.png``: every picture is drawn as PNG,
    and PNG bytes in ``x.txt`` or ``x.pdf`` would be a file its name misdescribes."""
    from pathlib import Path

    if out is None:
        raise ConfigError("explain draws a picture of this model: give --out PICTURE.png")
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
