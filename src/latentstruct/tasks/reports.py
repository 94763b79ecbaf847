"""Per-type evaluation reports: the counts and per-label scores behind a task's totals.

What ``latentstruct evaluate`` prints next to a task's overall metrics, as conlleval and
``spacy evaluate`` do:

* :func:`tag_report` -- token labels (POS tags, citation fields): per label precision,
  recall, F1 and support, plus token accuracy (the numbers of scikit-learn's
  ``precision_recall_fscore_support`` with ``zero_division=0``);
* :func:`binary_report` -- +-1 decisions: the confusion matrix (tp, fp, fn, tn) with the
  precision, recall and F1 of the positive class;
* :func:`attachment_report` -- dependency trees: per gold relation the scored tokens and
  their UAS and LAS;
* :func:`~latentstruct.tasks.sequence.chunk_metrics.chunk_report` (in
  ``tasks.sequence.chunk_metrics``) -- chunks.

Every report is a dict ``{"counts": {...}, "per_type": {type: {...}}}`` (binary:
``{"confusion": {...}, ...}``) of plain ints and floats.  A rate whose denominator is 0 is
0.0.  :func:`format_table` lays a metrics dict with such a report out as an aligned table.

:func:`evaluate_with_report` is what ``latentstruct evaluate`` runs: a task's
``evaluate_model`` and its ``report`` of the very predictions those totals scored.
:class:`TagAccuracy` is the metric a token-labelling task composes (``metric``): its totals
(``score``) and their breakdown (``report``) over tag lists; chunking's is
:class:`~latentstruct.tasks.sequence.chunk_metrics.ChunkScores`, the document classifier's
:class:`LabelAccuracy`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from ..exceptions import InputError
from .contracts import LATENT_BINARY

__all__ = ["prf", "tag_report", "binary_report", "attachment_report", "format_table",
           "TagAccuracy", "LabelAccuracy", "evaluate_with_report"]


def prf(correct: int, predicted: int, gold: int) -> tuple[float, float, float]:
    """Precision, recall and F1 from counts (0.0 where a denominator is 0)."""
    p = correct / predicted if predicted else 0.0
    r = correct / gold if gold else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return p, r, f


def _row(correct: int, predicted: int, gold: int) -> dict:
    p, r, f = prf(correct, predicted, gold)
    return {"precision": p, "recall": r, "f1": f, "support": gold, "predicted": predicted,
            "correct": correct}


def tag_report(gold: Iterable[Sequence[str]], pred: Iterable[Sequence[str]], *,
               unit: str = "tokens") -> dict:
    """Per-label precision, recall, F1 and support of token labels, and the counts of
    labelled and correctly labelled ``unit`` (``counts``: ``tokens``, ``correct_tokens``).

    ``gold`` and ``pred`` hold one label sequence per sentence (equal lengths).  Labels
    are every label that occurs in either; ``support`` is the label's gold count.
    """
    n_gold: Counter = Counter()
    n_pred: Counter = Counter()
    n_correct: Counter = Counter()
    tokens = 0
    for k, (g, p) in enumerate(zip(gold, pred, strict=True)):
        if len(g) != len(p):
            raise InputError(f"sentence {k}: {len(g)} gold labels but {len(p)} predicted")
        tokens += len(g)
        n_gold.update(g)
        n_pred.update(p)
        n_correct.update(a for a, b in zip(g, p) if a == b)
    correct = sum(n_correct.values())
    per = {lab: _row(n_correct[lab], n_pred[lab], n_gold[lab])
           for lab in sorted(set(n_gold) | set(n_pred))}
    return {"counts": {unit: tokens, f"correct_{unit}": correct}, "per_type": per}


class TagAccuracy:
    """Token accuracy over tag lists, with :func:`tag_report` as its breakdown: the metric
    of the token-labelling tasks (``pos``, ``citations``, ``sequence``; their ``metric``).

    ``gold`` and ``pred`` hold one tag list per sentence, in the raw form of
    ``make_dataset``'s ``y``; a gold ``None`` (a token left free) matches no prediction.
    """

    def score(self, gold, pred) -> dict:
        """``{"accuracy"}``: the share of tokens whose predicted tag is the gold one."""
        n = correct = 0
        for y, p in zip(gold, pred, strict=True):
            if len(y) != len(p):
                raise InputError(f"a sentence has {len(y)} gold tags but {len(p)} predicted")
            n += len(y)
            correct += sum(a == b for a, b in zip(y, p))
        return {"accuracy": correct / n if n else 0.0}

    def report(self, gold, pred) -> dict:
        """Per-tag precision, recall, F1 and support, and the token counts."""
        return tag_report(gold, pred)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class LabelAccuracy:
    """Accuracy over one label per example, with :func:`tag_report` over examples as its
    breakdown: the metric of the document classifier (its ``metric``).

    ``gold`` and ``pred`` hold one label per example (raw labels, as ``make_dataset``'s
    ``y``); a gold label the model never saw is always wrong.
    """

    def score(self, gold, pred) -> dict:
        """``{"accuracy", "n"}``: the share of examples whose predicted label is the gold
        one, and their number."""
        gold, pred = list(gold), list(pred)
        if len(gold) != len(pred):
            raise InputError(f"{len(gold)} gold labels but {len(pred)} predictions")
        n = len(gold)
        correct = sum(g == p for g, p in zip(gold, pred))
        return {"accuracy": correct / n if n else 0.0, "n": n}

    def report(self, gold, pred) -> dict:
        """Per-label precision, recall, F1 and support over documents."""
        return tag_report([[str(t)] for t in gold], [[str(p)] for p in pred], unit="documents")

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def evaluate_with_report(task, dataset, predict, decision_function=None) -> dict:
    """``task.evaluate_model``'s metrics plus ``task.report`` of the predictions they scored
    (what ``latentstruct evaluate`` prints).

    The predictions are those ``evaluate_model`` asked ``predict`` for or, for a binary
    task (capability ``latent-binary``) that scored ``decision_function``, their signs
    (+1 where f(x) >= 0), so the breakdown always matches the totals.  When it scored
    neither exactly once over the whole dataset (a ranking evaluation), or scored
    decisions of a task that is not binary, the metrics come alone.
    """
    seen: dict[str, list] = {"predict": [], "decision": []}

    def recording(kind, fn):
        def run(X):
            out = fn(X)
            seen[kind].append(out)
            return out
        return run

    metrics = dict(task.evaluate_model(
        dataset, recording("predict", predict),
        None if decision_function is None else recording("decision", decision_function)))
    if len(seen["predict"]) == 1 and not seen["decision"]:
        predictions = seen["predict"][0]
    elif (len(seen["decision"]) == 1 and not seen["predict"]
          and LATENT_BINARY in task.capabilities):
        predictions = np.where(np.asarray(seen["decision"][0], dtype=np.float64) >= 0.0, 1, -1)
    else:
        return metrics
    if len(predictions) == len(dataset):
        metrics.update(task.report(dataset, predictions))
    return metrics


def binary_report(y_true, y_pred) -> dict:
    """Confusion matrix of +-1 labels (positive: > 0) with the positive class's precision,
    recall and F1 under ``"confusion"``."""
    y = np.asarray(y_true)
    p = np.asarray(y_pred)
    if y.shape != p.shape or y.ndim != 1:
        raise InputError(f"{y.shape} gold labels but predictions have shape {p.shape}")
    tp = int(np.sum((y > 0) & (p > 0)))
    fp = int(np.sum((y <= 0) & (p > 0)))
    fn = int(np.sum((y > 0) & (p <= 0)))
    tn = int(np.sum((y <= 0) & (p <= 0)))
    precision, recall, f1 = prf(tp, tp + fp, tp + fn)
    return {"confusion": {"tp": tp, "fp": fp, "fn": fn, "tn": tn, "precision": precision,
                          "recall": recall, "f1": f1}}


def attachment_report(gold_heads, pred_heads, gold_rels, pred_rels, scored) -> dict:
    """Per gold relation: scored tokens, and the share with the right head (UAS) and the
    right head and relation (LAS; None when ``pred_rels`` is None, an unlabelled parser).

    Arguments hold one sequence per sentence: heads (ints), relations (strings) and
    ``scored`` (bools: the tokens the totals count, e.g. non-punctuation).
    """
    n: Counter = Counter()
    head_ok: Counter = Counter()
    label_ok: Counter = Counter()
    labelled = pred_rels is not None
    rows = zip(gold_heads, pred_heads, gold_rels, pred_rels if labelled else gold_rels, scored,
               strict=True)
    for gh, ph, gr, pr, sc in rows:
        for a, b, ra, rb, s in zip(gh, ph, gr, pr, sc, strict=True):
            if not s:
                continue
            n[ra] += 1
            if a == b:
                head_ok[ra] += 1
                label_ok[ra] += int(ra == rb)
    per = {rel: {"tokens": n[rel], "uas": head_ok[rel] / n[rel],
                 "las": label_ok[rel] / n[rel] if labelled else None}
           for rel in sorted(n)}
    return {"counts": {"tokens": sum(n.values()), "correct_heads": sum(head_ok.values())},
            "per_type": per}


# --------------------------------------------------------------------------------------
# tables
# --------------------------------------------------------------------------------------
def _cell(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v)).lower()
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        return f"{float(v):.4f}"
    return str(v)


def _grid(header: list[str], rows: list[list[str]]) -> list[str]:
    """Columns aligned: the first to the left, the others to the right."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    out = []
    for r in [header, *rows]:
        cells = [r[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(r[1:], widths[1:])]
        out.append("  ".join(cells).rstrip())
    return out


def format_table(metrics: Mapping, *, type_name: str = "type") -> str:
    """A metrics dict as aligned text: the overall values, then ``counts``, the
    ``confusion`` matrix and the ``per_type`` table (one row per type, a column per
    statistic), like conlleval's summary."""
    lines = []
    scalars = [(k, v) for k, v in metrics.items() if not isinstance(v, Mapping)]
    if scalars:
        lines += _grid(["metric", "value"], [[k, _cell(v)] for k, v in scalars])
    counts = metrics.get("counts")
    if counts:
        lines += ["", "counts: " + ", ".join(f"{k} {_cell(v)}" for k, v in counts.items())]
    confusion = metrics.get("confusion")
    if confusion:
        c = confusion
        lines += ["", *_grid(["", "predicted +1", "predicted -1"],
                             [["gold +1", _cell(c["tp"]), _cell(c["fn"])],
                              ["gold -1", _cell(c["fp"]), _cell(c["tn"])]])]
        rates = [k for k in c if k not in ("tp", "fp", "fn", "tn")]
        lines += ["positive class: " + ", ".join(f"{k} {_cell(c[k])}" for k in rates)]
    per = metrics.get("per_type")
    if per:
        columns: list[str] = []
        for row in per.values():
            columns += [k for k in row if k not in columns]
        rows = [[str(t), *(_cell(row.get(k)) for k in columns)] for t, row in per.items()]
        lines += ["", *_grid([type_name, *columns], rows)]
    return "\n".join(lines)
