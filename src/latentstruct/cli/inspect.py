"""``latentstruct inspect``: a model's strongest features per label, its label transitions
and bias (``latentstruct.pipelines.inspection``), as an aligned table or JSON."""

from __future__ import annotations

import json

from .common import load_for

__all__ = ["cmd_inspect", "format_inspection"]


def cmd_inspect(args) -> int:
    from ..limits import TOP, check_bounded

    check_bounded("--top", args.top, TOP, default=20)
    from ..data.path_rule import check_paths

    check_paths({"--model": args.model}, regular={"--model"})  # a FIFO is never opened
    from ..pipelines.inspection import inspect_model

    task, learner = load_for(args.model, None, "inspect")
    report = inspect_model(task, learner, top=args.top)
    if args.format == "json":
        print(json.dumps(report, ensure_ascii=False))
    else:
        print(format_inspection(report))
    return 0


def _w(v: float) -> str:
    return f"{v:+.4f}"


def _pairs(entries: list[dict]) -> list[str]:
    return [f"{_w(e['weight'])}  {e['feature']}" for e in entries]


def format_inspection(report: dict) -> str:
    """The dict of ``inspect_model`` as aligned text."""
    hashed = report["hashed_features"]
    lines = [f"{report['task']} model, learner {report['learner']}: {report['n_features']} "
             f"weights; feature names "
             + ("unknown (hashed feature index): features are shown by hash bucket #id"
                if hashed else "from the model's feature index")]
    if report.get("bias") is not None:
        lines.append(f"bias: {_w(report['bias'])}")
    if report.get("binary_bias") is not None:
        lines.append(f"bias of the binary examples (J-LIS): {_w(report['binary_bias'])}")
    if report["kind"] == "weights":
        lines += ["", "largest weights by magnitude:"]
        lines += ["  " + p for p in _pairs(report["largest"])] or ["  (all weights are 0)"]
        return "\n".join(lines)
    lines += ["", "strongest features per label (largest weights; most negative on the right):"]
    for label, feats in report["features"].items():
        pos, neg = _pairs(feats["positive"]), _pairs(feats["negative"])
        width = max((len(p) for p in pos), default=0)
        lines.append(label)
        for k in range(max(len(pos), len(neg))):
            left = pos[k] if k < len(pos) else ""
            right = neg[k] if k < len(neg) else ""
            lines.append(f"  {left.ljust(width)}    {right}".rstrip())
        if not pos and not neg:
            lines.append("  (all weights are 0)")
    trans = report.get("transitions")
    if trans:
        labels = trans["labels"]
        rows = [[lab, *(_w(v) for v in row)] for lab, row in zip(labels, trans["weights"])]
        rows += [["start", *(_w(v) for v in trans["start"])],
                 ["end", *(_w(v) for v in trans["end"])]]
        header = ["from \\ to", *labels]
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
        lines += ["", "label transitions (row: previous label, column: next label):"]
        for r in [header, *rows]:
            lines.append("  ".join([r[0].ljust(widths[0])]
                                   + [c.rjust(wd) for c, wd in zip(r[1:], widths[1:])]))
    return "\n".join(lines)
