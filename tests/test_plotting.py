"""Explanations as data, pictures in the plotting modules: draw_explanation for both kinds,
score breakdowns that add up, errors, lazy matplotlib, and the tasks-never-draw layering."""

import ast
import functools
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import latentstruct
from latentstruct.data.nlp import ParsedSentence
from latentstruct.exceptions import ConfigError, InputError
from latentstruct.plotting import (
    EXPLANATION_KINDS,
    draw_explanation,
    plot_alignment,
    score_breakdown,
    score_heading,
)
from latentstruct.tasks import Dataset, TransliterationTask
from latentstruct.tasks.pairs import ParaphraseTask, RteTask
from latentstruct.tasks.translit import TranslitCorpus

PNG = b"\x89PNG\r\n\x1a\n"
TASKS_DIR = Path(latentstruct.__file__).parent / "tasks"


def sent(tokens, pos, heads, deprels):
    """A hand-made ParsedSentence (no spaCy)."""
    n = len(tokens)
    return ParsedSentence(" ".join(tokens), tuple(tokens), tuple(t.lower() for t in tokens),
                          tuple(pos), tuple(pos), ("",) * n, tuple(heads), tuple(deprels),
                          (False,) * n)


A = sent(["the", "cat", "sat", "on", "the", "mat"], ["DET", "NOUN", "VERB", "ADP", "DET", "NOUN"],
         [1, 2, -1, 2, 5, 3], ["det", "nsubj", "ROOT", "prep", "det", "pobj"])
B = sent(["a", "cat", "was", "sitting", "on", "the", "mat"],
         ["DET", "NOUN", "AUX", "VERB", "ADP", "DET", "NOUN"],
         [1, 3, 3, -1, 3, 6, 4], ["det", "nsubj", "aux", "ROOT", "prep", "det", "pobj"])


def translit_explanation(seed=0):
    task = TransliterationTask().fit(Dataset([("abcd", "xyz")], [1]))
    w = np.random.default_rng(seed).normal(size=task.n_features)
    return task.structure_.explain(("abcad", "xzyx"), w)


def graph_explanation(cls=ParaphraseTask, seed=0):
    task = cls(use_wordnet=False).fit(Dataset([(A, B)], [1]))
    w = np.random.default_rng(seed).normal(size=task.n_features)
    return task.structure_.explain(task.make_example(A, B), w)


def parts_plus_bias(e) -> float:
    """The sum of every part score an explanation lists, plus its bias."""
    if e["kind"] == "character-alignment":
        return e["bias"] + sum(p[4] for p in e["pairs"])
    return (e["bias"] + sum(p[2] for p in e["mapped_pairs"] + e["mapped_edges"])
            + sum(p[1] for key in ("word_deletions1", "word_deletions2", "edge_deletions1",
                                   "edge_deletions2") for p in e[key]))


MAKERS = [translit_explanation, graph_explanation, functools.partial(graph_explanation, RteTask)]


@pytest.mark.parametrize("make", MAKERS)
def test_explanations_are_json_and_add_up(make):
    for seed in range(4):
        e = make(seed=seed)
        assert e["kind"] in EXPLANATION_KINDS
        assert json.loads(json.dumps(e)) == e  # plain JSON values, no tuples or numpy
        assert parts_plus_bias(e) == pytest.approx(e["score"], abs=1e-12)
        breakdown = score_breakdown(e)
        assert breakdown[-1][0] == "bias" and breakdown[-1][2] == e["bias"]
        assert sum(v for _, _, v in breakdown) == pytest.approx(e["score"], abs=1e-12)


@pytest.mark.parametrize("make", MAKERS)
def test_draw_explanation_writes_png(tmp_path, make):
    e = make()
    out = tmp_path / "e.png"
    draw_explanation(e, out, title="a title")
    data = out.read_bytes()
    assert data[:8] == PNG and len(data) > 1000
    # the same data after a JSON round trip (what a CLI or another process would hand over)
    draw_explanation(json.loads(json.dumps(e)), tmp_path / "again.png")
    assert (tmp_path / "again.png").read_bytes()[:8] == PNG
    assert sorted(p.name for p in tmp_path.iterdir()) == ["again.png", "e.png"]  # no temp files


def test_translit_explanation_from_character_ids(tmp_path):
    """A pair built from ids has no words: characters come from the alphabets, '?' for 0."""
    task = TransliterationTask().fit(Dataset([("abc", "xy")], [1]))
    x = TranslitCorpus.from_ids([(np.array([1, 0, 3]), np.array([2, 1]))])
    e = task.structure_.explain(x, np.ones(task.n_features), h=np.array([0, -1, 1]))
    assert e["source"] is None and e["source_chars"] == ["a", "?", "c"]
    assert e["target_chars"] == ["y", "x"] and e["alignment"] == [0, -1, 1]
    assert [p[:4] for p in e["pairs"]] == [[0, 0, "a", "y"], [2, 1, "c", "x"]]
    draw_explanation(e, tmp_path / "ids.png")
    assert (tmp_path / "ids.png").read_bytes()[:8] == PNG


def test_score_heading_shows_a_sum_that_adds_up():
    e = {"kind": "character-alignment", "source_chars": ["a", "b"], "target_chars": ["x"],
         "alignment": [0, -1], "pairs": [[0, 0, "a", "x", 1.25]], "bias": -0.5, "score": 0.75}
    heading, line = score_heading(e, "model")
    assert heading == "model    score 0.750"
    assert line == "= 1.250 (1 aligned character) \u2212 0.500 (bias)"
    # an explanation that leaves parts out still shows a sum that adds up
    partial = dict(e, score=1.0)
    assert score_breakdown(partial)[-1] == ("other parts", 0, pytest.approx(0.25))
    assert score_heading({"kind": "graph-alignment"}) == ("graph alignment", "")


@pytest.mark.parametrize("bad", [{"kind": "tree"}, {"kind": None}, {}, {"kind": "Graph-Alignment"}])
def test_unknown_kind_raises_config_error(tmp_path, bad):
    out = tmp_path / "x.png"
    with pytest.raises(ConfigError, match="character-alignment, graph-alignment"):
        draw_explanation(bad, out)
    assert not out.exists()


def test_malformed_explanations_raise_input_error_and_write_nothing(tmp_path):
    out = tmp_path / "x.png"
    e = translit_explanation()
    for bad in (dict(e, alignment=[9] * len(e["alignment"])),
                dict(e, pairs=[[0, 3, "a", "x"]]),
                {"kind": "character-alignment", "alignment": []}):
        with pytest.raises(InputError):
            draw_explanation(bad, out)
    g = graph_explanation()
    for bad in (dict(g, mapped_pairs=[[0, 99, 1.0]]), dict(g, edges1=[[0, 1]]),
                dict(g, word_deletions2=[["x", 1.0]]), {"kind": "graph-alignment", "words1": []}):
        with pytest.raises(InputError):
            draw_explanation(bad, out)
    with pytest.raises(InputError, match="mapping"):
        draw_explanation(["not", "a", "dict"], out)
    assert not out.exists()
    out.write_bytes(b"old")
    with pytest.raises(InputError):
        draw_explanation(dict(g, mapped_pairs=[[0, 99, 1.0]]), out)
    assert out.read_bytes() == b"old"  # atomic: a failed drawing leaves the file alone


def test_plot_alignment_from_raw_words(tmp_path):
    out = tmp_path / "a.png"
    plot_alignment("abc", "xy", [0, -1, 1], out, score=0.5, cell_scores=np.zeros((3, 2)),
                   title="t")
    assert out.read_bytes()[:8] == PNG
    with pytest.raises(InputError):
        plot_alignment("abc", "xy", [0, 1], tmp_path / "b.png")


def test_graph_arc_levels_keep_labels_apart():
    """Arc levels: nested arcs are higher and labels on one level never overlap."""
    from latentstruct.plotting.graph_alignment import _arc_levels

    xs = np.arange(8) * 5.0
    edges = [(0, 7, "root"), (0, 1, "a"), (1, 2, "b"), (2, 3, "c"), (0, 3, "d"), (4, 5, "e"),
             (4, 6, "f"), (3, 4, "g")]
    half = [3.0] * len(edges)  # labels wider than one slot: neighbours must be stacked
    lev = _arc_levels(edges, xs, half)
    assert lev[0] > max(lev[1:])  # the outermost arc is above everything inside it
    assert lev[4] > max(lev[1], lev[2], lev[3])
    for a in range(len(edges)):
        for b in range(a + 1, len(edges)):
            if lev[a] == lev[b]:
                ma = (xs[edges[a][0]] + xs[edges[a][1]]) / 2
                mb = (xs[edges[b][0]] + xs[edges[b][1]]) / 2
                assert abs(ma - mb) >= half[a] + half[b]


def test_matplotlib_is_imported_lazily():
    code = ("import sys, latentstruct.plotting, latentstruct.plotting.graph_alignment, latentstruct.cli; "
            "print('matplotlib' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ------------------------------------------------------------------------------ layering
FORBIDDEN = ("latentstruct.plotting", "latentstruct.plotting_graph", "latentstruct.io",
             "latentstruct.learners.persistence", "matplotlib")


def _imported_modules(path: Path, package: str) -> list[tuple[int, str]]:
    """Absolute names of every module an ``import`` anywhere in the file brings in
    (``from X import y`` yields X and X.y, relative imports resolved against package)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            out.extend((node.lineno, a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = parts[:len(parts) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            out.append((node.lineno, module))
            out.extend((node.lineno, f"{module}.{a.name}") for a in node.names)
    return out


def _forbidden(name: str) -> bool:
    return any(name == f or name.startswith(f + ".") for f in FORBIDDEN)


def test_import_finder_resolves_relative_imports(tmp_path):
    src = tmp_path / "t.py"
    src.write_text("from ..plotting import x\nfrom .. import io\nimport matplotlib.pyplot\n"
                   "def f():\n    from ..learners import persistence\n    from .base import y\n")
    found = [name for _, name in _imported_modules(src, "latentstruct.tasks")]
    assert [n for n in found if _forbidden(n)] == [
        "latentstruct.plotting", "latentstruct.plotting.x", "latentstruct.io",
        "matplotlib.pyplot", "latentstruct.learners.persistence"]
    assert "latentstruct.tasks.base" in found


@pytest.mark.slow
def test_tasks_never_import_plotting_or_model_io():
    files = sorted(TASKS_DIR.rglob("*.py"))
    assert TASKS_DIR.joinpath("translit", "task.py") in files and len(files) > 5
    bad = [f"{path.name}:{line}: {name}" for path in files
           for line, name in _imported_modules(
               path, ".".join(("latentstruct", *path.relative_to(TASKS_DIR.parent).parent.parts)))
           if _forbidden(name)]
    assert bad == [], "tasks must describe structures as data, not draw or read models"


# ------------------------------------------------------------------------------ label layout
def _text_boxes(fig) -> list:
    """(text, window extent) of every text of a drawn figure, its rounded box included."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    out = []
    for t in [*(t for ax in fig.axes for t in ax.texts), *fig.texts]:
        if t.get_text():
            box = t.get_bbox_patch()
            out.append((t.get_text(), (box or t).get_window_extent(renderer)))
    return out


PARALLEL = {
    "kind": "graph-alignment", "words1": ["a", "b", "c"], "words2": ["x", "y"],
    # three edges between a and b (two parallel, one reversed), one beside them
    "edges1": [[0, 1, "nsubj"], [0, 1, "dobj"], [1, 0, "conj"], [1, 2, "amod"]],
    "edges2": [[0, 1, "nsubj"], [0, 1, "obj"]],
    "mapped_pairs": [[0, 0, 0.5], [1, 1, -0.25]], "mapped_edges": [[0, 0, 0.125]],
    "word_deletions1": [[2, -0.3]], "edge_deletions1": [[1, 0.2], [2, 0.1], [3, 0.05]],
    "edge_deletions2": [[1, -0.4]], "bias": 1.0, "score": 1.0 + 0.25 + 0.125 - 0.3 + 0.35 - 0.4,
}


def test_graph_picture_labels_never_overlap_with_parallel_edges():
    from latentstruct.plotting import explanation_figure

    boxes = _text_boxes(explanation_figure(PARALLEL, title="parallel"))
    texts = [t for t, _ in boxes]
    # 5 words, 6 arc labels, 2 mapping scores, 1 deletion score, title, breakdown, legend
    assert len(boxes) == 5 + 6 + 2 + 1 + 3
    assert "nsubj\n+0.12" in texts and "dobj\n+0.20" in texts and "conj\n+0.10" in texts
    overlapping = [(a, b) for i, (a, ba) in enumerate(boxes) for b, bb in boxes[i + 1:]
                   if ba.overlaps(bb)]
    assert overlapping == []
    assert "= 0.250 (2 word mappings) + 0.125 (1 edge mapping)" in texts[-2]
    assert texts[-2].endswith("+ 1.000 (bias)")  # the shown terms add up: no "other parts"


def test_plot_alignment_shows_the_bias_so_the_terms_add_up(tmp_path, monkeypatch):
    import latentstruct.plotting.character_alignment as plotting

    figures = []
    monkeypatch.setattr(plotting, "save_png", lambda fig, path: figures.append(fig))
    cells = np.array([[0.25, 0.0], [0.0, 0.0], [0.0, 0.5]])
    plot_alignment("abc", "xy", [0, -1, 1], tmp_path / "a.png", score=1.0, cell_scores=cells,
                   bias=0.25, title="t")
    plot_alignment("abc", "xy", [0, -1, 1], tmp_path / "b.png", score=1.0, cell_scores=cells)
    with_bias, without = ([t.get_text() for t in fig.texts] for fig in figures)
    assert with_bias[:2] == ["t    score 1.000", "= 0.750 (2 aligned characters) + 0.250 (bias)"]
    assert without[1] == "= 0.750 (2 aligned characters) + 0.250 (other parts)"
