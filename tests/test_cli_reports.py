"""Evaluation reports (per-type scores and counts), tag-scheme and script checks, and
prediction on unlabelled input, from the library and the command line."""

import json

import numpy as np
import pytest
from sklearn.metrics import confusion_matrix, precision_recall_fscore_support

from latentstruct.cli import main
from latentstruct.exceptions import InputError
from latentstruct.tasks import Dataset, LatentBinaryTask
from latentstruct.tasks.sequence.chunk_metrics import chunk_f1, chunk_report, detect_tag_scheme
from latentstruct.tasks.sequence.encodings import convert
from latentstruct.tasks.reports import (attachment_report, binary_report, evaluate_with_report,
                                        format_table, prf,
                                        tag_report)

from conftest import TINY_CHUNK


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------------------------------------ chunks
def test_chunk_report_hand_computed():
    gold = [["B-NP", "I-NP", "O", "B-VP", "I-VP"], ["B-PP", "B-NP", "I-NP"]]
    pred = [["B-NP", "I-NP", "O", "B-VP", "B-VP"], ["B-PP", "B-NP", "O"]]
    r = chunk_report(gold, pred)
    # gold: NP(0,1) VP(3,4) | PP(0,0) NP(1,2); pred: NP(0,1) VP(3,3) VP(4,4) | PP(0,0) NP(1,1)
    assert r["counts"] == {"tokens": 8, "correct_tokens": 6, "gold_chunks": 4,
                           "predicted_chunks": 5, "correct_chunks": 2}
    assert r["per_type"]["NP"] == {"gold": 2, "predicted": 2, "correct": 1, "precision": 0.5,
                                   "recall": 0.5, "f1": 0.5}
    assert r["per_type"]["VP"] == {"gold": 1, "predicted": 2, "correct": 0, "precision": 0.0,
                                   "recall": 0.0, "f1": 0.0}
    assert r["per_type"]["PP"]["f1"] == 1.0
    totals = chunk_f1(gold, pred)
    assert totals["precision"] == pytest.approx(2 / 5) and totals["recall"] == pytest.approx(2 / 4)
    assert totals["accuracy"] == pytest.approx(6 / 8)


def test_chunk_report_follows_conlleval_on_stray_inside_tags():
    # conlleval: I-X after O, at the start, or after another type opens a chunk, so IOB1
    # predictions against IOB2 gold still match chunk for chunk
    gold = [["B-NP", "I-NP", "B-NP", "O", "B-VP"]]
    pred = [["I-NP", "I-NP", "B-NP", "O", "I-VP"]]
    r = chunk_report(gold, pred)
    assert r["counts"]["correct_chunks"] == 3 and r["counts"]["correct_tokens"] == 3
    assert r["per_type"]["NP"]["f1"] == 1.0 and r["per_type"]["VP"]["f1"] == 1.0


def test_detect_tag_scheme():
    iob2 = [["B-NP", "I-NP", "O", "B-VP"], ["B-NP", "B-NP"]]
    iob1 = [convert(t, "iob2", "iob1") for t in iob2]
    assert iob1 == [["I-NP", "I-NP", "O", "I-VP"], ["I-NP", "B-NP"]]
    assert detect_tag_scheme(iob2) == "iob2"
    assert detect_tag_scheme(iob1) == "iob1"
    assert detect_tag_scheme([convert(t, "iob2", "ioe2") for t in iob2]) == "ioe2"
    assert detect_tag_scheme([["O", "O"]]) is None  # no chunks: nothing to tell
    assert detect_tag_scheme(iob2[:1] + iob1[:1]) is None  # mixed, no majority


# ------------------------------------------------------------------------------ tags
def test_tag_report_matches_sklearn():
    rng = np.random.default_rng(0)
    labels = ["NOUN", "VERB", "DET", "ADJ", "X"]
    gold = [list(rng.choice(labels[:4], size=n)) for n in (7, 3, 11)]
    pred = [[g if rng.random() < 0.6 else str(rng.choice(labels)) for g in s] for s in gold]
    r = tag_report(gold, pred)
    flat_g = [t for s in gold for t in s]
    flat_p = [t for s in pred for t in s]
    names = sorted(set(flat_g) | set(flat_p))
    assert list(r["per_type"]) == names
    p, rc, f, support = precision_recall_fscore_support(flat_g, flat_p, labels=names,
                                                        zero_division=0)
    for k, name in enumerate(names):
        row = r["per_type"][name]
        assert row["precision"] == pytest.approx(p[k])
        assert row["recall"] == pytest.approx(rc[k])
        assert row["f1"] == pytest.approx(f[k])
        assert row["support"] == support[k]
    assert r["counts"] == {"tokens": 21, "correct_tokens": sum(a == b for a, b in zip(flat_g, flat_p))}
    with pytest.raises(InputError, match="sentence 0"):
        tag_report([["A"]], [["A", "B"]])


def test_binary_report_matches_sklearn():
    y = np.array([1, 1, -1, -1, 1, -1, 1])
    p = np.array([1, -1, -1, 1, 1, -1, -1])
    c = binary_report(y, p)["confusion"]
    tn, fp, fn, tp = confusion_matrix(y, p, labels=[-1, 1]).ravel()
    assert (c["tp"], c["fp"], c["fn"], c["tn"]) == (tp, fp, fn, tn) == (2, 1, 2, 2)
    assert (c["precision"], c["recall"]) == (2 / 3, 2 / 4)
    assert c["f1"] == pytest.approx(2 * 2 / (2 * 2 + 1 + 2))
    assert prf(0, 0, 0) == (0.0, 0.0, 0.0)


def test_attachment_report_hand_computed():
    r = attachment_report([[2, 0, 2]], [[2, 0, 1]], [["nsubj", "root", "obj"]],
                          [["nsubj", "root", "iobj"]], [[True, True, True]])
    assert r["per_type"] == {"nsubj": {"tokens": 1, "uas": 1.0, "las": 1.0},
                             "obj": {"tokens": 1, "uas": 0.0, "las": 0.0},
                             "root": {"tokens": 1, "uas": 1.0, "las": 1.0}}
    r = attachment_report([[2, 0, 2]], [[2, 0, 2]], [["nsubj", "root", "punct"]], None,
                          [[True, True, False]])
    assert r["per_type"] == {"nsubj": {"tokens": 1, "uas": 1.0, "las": None},
                             "root": {"tokens": 1, "uas": 1.0, "las": None}}
    assert r["counts"] == {"tokens": 2, "correct_heads": 2}


def test_format_table_aligns_columns():
    text = format_table({"f1": 0.5, "counts": {"tokens": 8},
                         "per_type": {"NP": {"gold": 12, "f1": 0.25}, "ADVP": {"gold": 1, "f1": 1.0}}})
    lines = text.splitlines()
    assert lines[:2] == ["metric   value", "f1      0.5000"]
    assert "counts: tokens 8" in lines
    table = lines[lines.index("type  gold      f1"):]
    assert table == ["type  gold      f1", "NP      12  0.2500", "ADVP     1  1.0000"]


# ------------------------------------------------------------------------------ binary tasks
class _SignTask(LatentBinaryTask):
    """A stand-in binary task scored through decision values (as grammaticality is)."""

    name = ""

    def featurize(self, dataset):
        return list(dataset.records)

    def encode_targets(self, targets):
        return np.asarray(targets)

    def evaluate_model(self, dataset, predict, decision_function=None):
        pred = np.where(np.asarray(decision_function(self.featurize(dataset))) >= 0, 1, -1)
        return {"accuracy": float(np.mean(pred == self.encode_targets(dataset.targets)))}


def test_binary_task_reports_the_confusion_of_its_decisions():
    data = Dataset([0.5, -1.0, 2.0, -0.1], [1, 1, -1, -1])
    m = evaluate_with_report(_SignTask(), data, predict=None, decision_function=np.asarray)
    assert m["accuracy"] == 0.5
    assert m["confusion"] == {"tp": 1, "fp": 1, "fn": 1, "tn": 1, "precision": 0.5,
                                   "recall": 0.5, "f1": 0.5}


def test_graph_pair_task_reports_a_confusion_matrix():
    from test_plotting import A, B

    from latentstruct.tasks.pairs import ParaphraseTask

    task = ParaphraseTask(use_wordnet=False).fit(Dataset([(A, B)], [1]))
    data = Dataset([(A, B), (B, A), (A, A)], [1, -1, 1])
    m = evaluate_with_report(task, data, lambda X: np.array([1, 1, -1]))
    assert m["accuracy"] == pytest.approx(1 / 3)
    assert m["confusion"]["tp"] == 1 and m["confusion"]["fp"] == 1 and m["confusion"]["fn"] == 1
    assert m["f1"] == pytest.approx(m["confusion"]["f1"])  # the totals and the breakdown agree


# ------------------------------------------------------------------------------ chunk CLI
def _iob1(text: str) -> str:
    blocks = []
    for block in text.strip().split("\n\n"):
        rows = [line.split() for line in block.splitlines()]
        tags = convert([r[2] for r in rows], "iob2", "iob1")
        blocks.append("\n".join(f"{w} {p} {t}" for (w, p, _), t in zip(rows, tags)))
    return "\n\n".join(blocks) + "\n"


def _words_pos(text: str, columns: int = 2) -> str:
    return "\n".join(" ".join(line.split()[:columns]) for line in text.splitlines()) + "\n"


def test_evaluate_chunk_json_and_table(chunk_model, tiny_chunk_file, capsys):
    code, out, _ = run(capsys, "evaluate", "--model", chunk_model, "--test", tiny_chunk_file)
    m = json.loads(out)
    assert code == 0 and m["f1"] == 1.0 and m["accuracy"] == 1.0  # the old keys, unchanged
    assert m["counts"] == {"tokens": 25, "correct_tokens": 25, "gold_chunks": 11,
                           "predicted_chunks": 11, "correct_chunks": 11}
    assert {t: r["gold"] for t, r in m["per_type"].items()} == {"ADVP": 1, "NP": 5, "PP": 1,
                                                                "VP": 4}
    assert '"gold": 5,' in out  # counts are JSON integers
    code, out, _ = run(capsys, "evaluate", "--model", chunk_model, "--test", tiny_chunk_file,
                       "--format", "table")
    assert code == 0
    assert "type  gold  predicted  correct  precision  recall      f1" in out
    assert "NP       5          5        5     1.0000  1.0000  1.0000" in out


def test_iob1_test_file_against_iob2_model(chunk_model, tmp_path, capsys):
    iob1 = tmp_path / "iob1.txt"
    iob1.write_text(_iob1(TINY_CHUNK), encoding="utf-8")
    code, out, err = run(capsys, "evaluate", "--model", chunk_model, "--test", iob1)
    assert code == 2 and out == ""
    assert "uses IOB1 chunk tags but the model was trained on IOB2" in err
    assert "--option input_scheme=iob1" in err and err.count("\n") == 1
    code, out, _ = run(capsys, "evaluate", "--model", chunk_model, "--test", iob1,
                       "--option", "input_scheme=iob1")
    assert code == 0 and json.loads(out)["accuracy"] == 1.0  # converted as read
    code, _, err = run(capsys, "evaluate", "--model", chunk_model, "--test", iob1,
                       "--option", "input_scheme=ioe9")
    assert code == 2 and "'input_scheme' parameter of the 'chunk' task must be a str among {'iob1', 'iob2'} or None. Got 'ioe9'" in err


def test_predict_unlabelled_chunk_input_to_stdout(chunk_model, tiny_chunk_file, tmp_path,
                                                  capsys, monkeypatch):
    words = tmp_path / "words.txt"
    words.write_text(_words_pos(TINY_CHUNK), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "predict", "--model", chunk_model, "--input", words, "--output", "-")
    assert code == 0 and out.rstrip("\n") == TINY_CHUNK.rstrip("\n")
    assert not (tmp_path / "-").exists()
    code, _, err = run(capsys, "evaluate", "--model", chunk_model, "--test", words)
    assert code == 2 and "no gold chunk labels" in err
    only_words = tmp_path / "only.txt"
    only_words.write_text(_words_pos(TINY_CHUNK, 1), encoding="utf-8")
    code, _, err = run(capsys, "predict", "--model", chunk_model, "--input", only_words,
                       "--output", "-")
    assert code == 2 and "POS tag of every word" in err
    code, _, err = run(capsys, "train", "chunk", "--train", words, "--model", tmp_path / "m.npz")
    assert code == 2 and "no chunk tags" in err


def test_predict_checks_output_before_any_work(chunk_model, tmp_path, capsys):
    code, _, err = run(capsys, "predict", "--model", tmp_path / "missing.npz", "--input",
                       tmp_path / "missing.txt", "--output", tmp_path / "no" / "out.txt")
    assert code == 2 and "--output" in err and "does not exist" in err
    assert "missing.npz" not in err  # the model was not even opened


# ------------------------------------------------------------------------------ pos, citations
CONLLU = (
    "1\tDogs\t_\tNOUN\t_\t_\t_\t_\t_\t_\n2\tbark\t_\tVERB\t_\t_\t_\t_\t_\t_\n\n"
    "1\tCats\t_\tNOUN\t_\t_\t_\t_\t_\t_\n2\tsleep\t_\tVERB\t_\t_\t_\t_\t_\t_\n"
    "3\tquietly\t_\tADV\t_\t_\t_\t_\t_\t_\n\n"
)


def test_pos_per_tag_report_and_plain_text_input(tmp_path, capsys):
    data = tmp_path / "a.conllu"
    data.write_text(CONLLU, encoding="utf-8")
    model = tmp_path / "pos.npz"
    assert run(capsys, "train", "pos", "--train", data, "--model", model, "--quiet")[0] == 0
    code, out, _ = run(capsys, "evaluate", "--model", model, "--test", data)
    m = json.loads(out)
    assert code == 0 and m["accuracy"] == 1.0 and m["counts"] == {"tokens": 5, "correct_tokens": 5}
    assert m["per_type"]["NOUN"] == {"precision": 1.0, "recall": 1.0, "f1": 1.0, "support": 2,
                                     "predicted": 2, "correct": 2}
    plain = tmp_path / "plain.txt"
    plain.write_text("Dogs bark\n\nCats sleep quietly\n", encoding="utf-8")
    out_file = tmp_path / "out.conllu"
    assert run(capsys, "predict", "--model", model, "--input", plain, "--output", out_file)[0] == 0
    assert out_file.read_text(encoding="utf-8") == CONLLU
    code, _, err = run(capsys, "train", "pos", "--train", plain, "--model", tmp_path / "m2.npz")
    assert code == 2 and "not CoNLL-U" in err


CORA = ("<NEWREFERENCE>\n<author> A. Cau. </author> <title> Formal methods </title> "
        "<date> 1994. </date>\n<NEWREFERENCE>\n<author> B. Smith. </author> <title> Type "
        "systems </title> <date> 2001. </date>\n")


def test_citations_per_field_and_plain_references(tmp_path, capsys):
    data = tmp_path / "cora.txt"
    data.write_text(CORA, encoding="utf-8")
    model = tmp_path / "cit.npz"
    assert run(capsys, "train", "citations", "--train", data, "--model", model, "--quiet",
               "--option", "C=1")[0] == 0
    code, out, _ = run(capsys, "evaluate", "--model", model, "--test", data, "--format", "table")
    assert code == 0 and "author" in out and "support" in out
    code, out, _ = run(capsys, "evaluate", "--model", model, "--test", data)
    m = json.loads(out)
    assert m["accuracy"] == 1.0
    assert {f: r["support"] for f, r in m["per_type"].items()} == {"author": 4, "date": 2,
                                                                   "title": 4}
    plain = tmp_path / "refs.txt"
    plain.write_text("A. Cau. Formal methods 1994.\nB. Smith. Type systems 2001.\n",
                     encoding="utf-8")
    code, out, _ = run(capsys, "predict", "--model", model, "--input", plain, "--output", "-")
    assert code == 0 and out == CORA
    bad = tmp_path / "tagged.txt"
    bad.write_text("<author> A. Cau. </author>\n", encoding="utf-8")
    code, _, err = run(capsys, "predict", "--model", model, "--input", bad, "--output", "-")
    assert code == 2 and "tagged.txt:1:" in err and "<NEWREFERENCE>" in err


# ------------------------------------------------------------------------------ translit
@pytest.mark.slow
def test_translit_model_of_another_script_is_refused_on_default_data(tmp_path, capsys):
    from latentstruct.data.translit import cldr_pairs

    tsv = tmp_path / "ru.tsv"
    tsv.write_text("".join(f"{s}\t{' '.join(t)}\t1\n" for s, t in cldr_pairs("ru")[:30]),
                   encoding="utf-8")
    model = tmp_path / "ru.npz"
    assert run(capsys, "train", "translit", "--train", tsv, "--model", model, "--quiet",
               "--option", "n_train=30", "--option", "bigrams=false")[0] == 0
    code, out, err = run(capsys, "evaluate", "--model", model, "--option", "n_test=20")
    assert code == 2 and out == ""
    assert "trained on Cyrillic targets" in err and "is Hebrew" in err
    assert "--option lang=ru" in err
    code, out, _ = run(capsys, "evaluate", "--model", model, "--option", "n_test=20",
                       "--option", "lang=ru")
    assert code == 0 and set(json.loads(out)) == {"mrr", "accuracy"}
    # an explicit test file is the user's choice: no refusal
    code, _, _ = run(capsys, "evaluate", "--model", model, "--test", tsv)
    assert code == 0


# ------------------------------------------------------------------------------ metrics
def test_the_sequence_tasks_metric_objects_score_and_break_down_tag_lists():
    from latentstruct.tasks import ChunkTask, PosTask
    from latentstruct.tasks.reports import TagAccuracy
    from latentstruct.tasks.sequence.chunk_metrics import ChunkScores

    gold = [["B-NP", "I-NP", "O"], ["B-VP", None]]
    pred = [["B-NP", "I-NP", "B-VP"], ["B-VP", "O"]]
    assert isinstance(PosTask.metric, TagAccuracy) and isinstance(ChunkTask.metric, ChunkScores)
    assert TagAccuracy().score(gold, pred) == {"accuracy": 0.6}  # 3 of 5; a free gold matches none
    scores = ChunkScores().score(gold, pred)
    assert scores["precision"] == pytest.approx(2 / 3) and scores["recall"] == pytest.approx(1.0)
    assert ChunkScores().report([["B-NP", "O"]], [["B-NP", "O"]])["counts"]["correct_chunks"] == 1
    with pytest.raises(InputError, match="2 gold tags but 1 predicted"):
        TagAccuracy().score([["A", "B"]], [["A"]])


def test_decisions_of_a_task_that_is_not_binary_give_the_metrics_alone():
    class _Ranked(_SignTask):
        capabilities = frozenset()

    data = Dataset([0.5, -1.0], [1, -1])
    m = evaluate_with_report(_Ranked(), data, predict=None, decision_function=np.asarray)
    assert m == {"accuracy": 1.0}


def test_a_task_that_composes_a_metric_scores_and_reports_raw_labels_with_it():
    from latentstruct.tasks import LabelAccuracy, Task

    class _Labels(Task):
        metric = LabelAccuracy()

        def decode_predictions(self, predictions):
            return ["yes" if p else "no" for p in predictions]

    data = Dataset(["a", "b", "c"], ["yes", "no", "maybe"])  # "maybe": a label never predicted
    task = _Labels()
    assert task.evaluate_raw(data.targets, [1, 0, 0]) == {"accuracy": pytest.approx(2 / 3), "n": 3}
    per = task.report(data, [1, 0, 0])["per_type"]
    assert per["maybe"]["support"] == 1 and per["maybe"]["recall"] == 0.0
    assert per["no"]["precision"] == 0.5
    with pytest.raises(InputError, match="3 gold labels but 2 predictions"):
        LabelAccuracy().score(["a", "b", "c"], ["a", "b"])
    assert Task().report(data, [1, 0, 0]) == {}  # no metric: no breakdown
