"""The dependency parsing and reranking pipeline from the command line: train dep, kbest
(plain and jackknifed), train rerank, evaluate; and the bad inputs each must refuse with
file:line and exit 2."""

import json

import numpy as np
import pytest

from latentstruct.cli import main
from latentstruct.data.dependency.kbest import read_kbest, write_kbest

NOUNS = ["dog", "cat", "bird", "man", "woman", "child", "house", "car"]
VERBS = ["sees", "likes", "finds", "takes"]
ADJS = ["big", "small", "red", "old"]


def _sentence(rng):
    """DET (ADJ) NOUN VERB DET (ADJ) NOUN . with its UD tree."""
    subj_adj, obj_adj = rng.random() < 0.5, rng.random() < 0.5
    verb = 3 + subj_adj
    words, tags, heads, rels = [], [], [], []

    def noun_phrase(adj, rel):
        noun = len(words) + 2 + adj
        words.append("the"), tags.append("DET"), heads.append(noun), rels.append("det")
        if adj:
            words.append(ADJS[rng.integers(len(ADJS))])
            tags.append("ADJ"), heads.append(noun), rels.append("amod")
        words.append(NOUNS[rng.integers(len(NOUNS))])
        tags.append("NOUN"), heads.append(verb), rels.append(rel)

    noun_phrase(subj_adj, "nsubj")
    words.append(VERBS[rng.integers(len(VERBS))])
    tags.append("VERB"), heads.append(0), rels.append("root")
    noun_phrase(obj_adj, "obj")
    words.append("."), tags.append("PUNCT"), heads.append(verb), rels.append("punct")
    return words, tags, heads, rels


def write_treebank(path, n, seed=0):
    rng = np.random.default_rng(seed)
    lines = []
    for i in range(n):
        words, tags, heads, rels = _sentence(rng)
        lines.append(f"# sent_id = s{i + 1}")
        for k, (w, t, h, r) in enumerate(zip(words, tags, heads, rels), 1):
            lines.append(f"{k}\t{w}\t{w}\t{t}\t_\t_\t{h}\t{r}\t_\t_")
        lines.append("")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def dep_setup(tmp_path, capsys):
    train = write_treebank(tmp_path / "train.conllu", 40, seed=1)
    dev = write_treebank(tmp_path / "dev.conllu", 15, seed=2)
    model = tmp_path / "dep.model"
    code, _, err = run(capsys, "train", "dep", "--train", train, "--model", model,
                       "--option", "hash_bits=16", "--option", "label_hash_bits=10",
                       "--option", "max_iter=5", "--quiet")
    assert code == 0, err
    return tmp_path, train, dev, model


def test_train_evaluate_predict_dep(dep_setup, capsys):
    tmp_path, train, dev, model = dep_setup
    code, out, err = run(capsys, "evaluate", "--model", model, "--test", dev)
    assert code == 0, err
    metrics = json.loads(out)
    assert set(metrics) >= {"uas", "las"} and metrics["uas"] > 0.9 and metrics["las"] > 0.9
    pred = tmp_path / "pred.conllu"
    code, _, err = run(capsys, "predict", "--model", model, "--input", dev, "--output", pred)
    assert code == 0, err
    rows = [ln.split("\t") for ln in pred.read_text().splitlines() if ln and ln[0].isdigit()]
    assert rows and all(r[6].isdigit() and r[7] != "_" for r in rows)


@pytest.mark.slow
def test_kbest_plain_and_jackknife_then_rerank(dep_setup, capsys):
    tmp_path, train, dev, model = dep_setup
    dev_lists, train_lists = tmp_path / "dev.kbest", tmp_path / "train.kbest"
    code, _, err = run(capsys, "kbest", "--model", model, "--input", dev, "--output", dev_lists,
                       "-k", 4, "--quiet")
    assert code == 0, err
    header, sents = read_kbest(dev_lists)
    assert header.k == 4 and header.folds == 1 and len(sents) == 15
    assert [s.id for s in sents[:3]] == ["s1", "s2", "s3"]  # the CoNLL-U sent_id
    assert all(1 <= len(s.candidates) <= 4 for s in sents)
    assert all(np.all(np.diff([c.score for c in s.candidates]) <= 1e-9) for s in sents)
    code, _, err = run(capsys, "kbest", "--model", model, "--input", train, "--output",
                       train_lists, "-k", 4, "--folds", 2, "--quiet")
    assert code == 0, err
    theader, tsents = read_kbest(train_lists)
    assert theader.folds == 2 and theader.parser_id == header.parser_id and len(tsents) == 40
    rmodel = tmp_path / "rerank.model"
    code, _, err = run(capsys, "train", "rerank", "--train", train_lists, "--model", rmodel,
                       "--option", "domain=pos", "--option", "graph=head",
                       "--option", "hash_bits=14", "--option", "n_epochs=2", "--quiet")
    assert code == 0, err
    code, out, err = run(capsys, "evaluate", "--model", rmodel, "--test", dev_lists)
    assert code == 0, err
    metrics = json.loads(out)
    assert 0.0 <= metrics["uas"] <= metrics["oracle_uas"] <= 1.0 and metrics["las"] is not None


def test_jackknife_needs_the_models_training_data(dep_setup, capsys):
    tmp_path, train, dev, model = dep_setup
    out = tmp_path / "x.kbest"
    code, _, err = run(capsys, "kbest", "--model", model, "--input", dev, "--output", out,
                       "--folds", 2, "--quiet")
    assert code == 2 and "not the data this model was trained on" in err and not out.exists()


@pytest.mark.slow
def test_kbest_of_another_parser_is_refused(dep_setup, capsys):
    tmp_path, train, dev, model = dep_setup
    lists = tmp_path / "train.kbest"
    assert run(capsys, "kbest", "--model", model, "--input", train, "--output", lists, "-k", 3,
               "--folds", 2, "--quiet")[0] == 0
    rmodel = tmp_path / "r.model"
    assert run(capsys, "train", "rerank", "--train", lists, "--model", rmodel, "--option",
               "domain=no-hidden", "--option", "hash_bits=12", "--option", "n_epochs=1",
               "--quiet")[0] == 0
    header, sents = read_kbest(lists)
    other = tmp_path / "other.kbest"
    write_kbest(other, type(header)(**{**header.__dict__, "parser_id": "0" * 24}), sents)
    code, _, err = run(capsys, "evaluate", "--model", rmodel, "--test", other)
    assert code == 2 and f"{other}:1:" in err and "parser" in err


def test_kbest_needs_a_dep_model(tmp_path, capsys, chunk_model):
    code, _, err = run(capsys, "kbest", "--model", chunk_model, "--input", tmp_path / "x",
                       "--output", tmp_path / "y")
    assert code == 2 and "dep" in err


TREE_ERRORS = {
    "cycle": ("1\ta\ta\tX\t_\t_\t2\tdep\t_\t_\n2\tb\tb\tX\t_\t_\t1\tdep\t_\t_\n"
              "3\tc\tc\tX\t_\t_\t0\troot\t_\t_\n", "cycle"),
    "head out of range": ("1\ta\ta\tX\t_\t_\t0\troot\t_\t_\n2\tb\tb\tX\t_\t_\t7\tdep\t_\t_\n",
                          "7"),
    "two roots": ("1\ta\ta\tX\t_\t_\t0\troot\t_\t_\n2\tb\tb\tX\t_\t_\t0\troot\t_\t_\n",
                  "root"),
}


@pytest.mark.parametrize("case", sorted(TREE_ERRORS))
def test_malformed_trees_exit_2_with_file_and_line(tmp_path, capsys, case):
    text, needle = TREE_ERRORS[case]
    bad = tmp_path / "bad.conllu"
    bad.write_text("# sent_id = ok\n1\tx\tx\tX\t_\t_\t0\troot\t_\t_\n\n# sent_id = bad\n" + text
                   + "\n", encoding="utf-8")
    model = tmp_path / "m.model"
    code, _, err = run(capsys, "train", "dep", "--train", bad, "--model", model, "--quiet")
    assert code == 2 and "Traceback" not in err and not model.exists()
    assert f"{bad}:" in err and needle in err
    line = int(err.split(f"{bad}:")[1].split(":")[0])
    assert 5 <= line <= 7  # a row of the bad sentence


def test_kbest_checks_its_output_path_before_parsing(dep_setup, capsys):
    tmp_path, train, dev, model = dep_setup
    code, _, err = run(capsys, "kbest", "--model", model, "--input", dev, "--output", tmp_path)
    assert code == 2 and "is a directory" in err
    code, _, err = run(capsys, "kbest", "--model", model, "--input", dev, "--output",
                       tmp_path / "missing" / "x.kbest", "--folds", 2)
    assert code == 2 and "does not exist" in err and "fold 1/2" not in err


@pytest.mark.slow
def test_jackknife_uses_the_models_own_tagger_not_a_path_it_names(tmp_path, capsys):
    """A dep model with predicted POS carries its tagger; --folds reuses it, and the
    tagger_model path recorded in the file is never opened again (model files are data)."""
    train = write_treebank(tmp_path / "train.conllu", 40, seed=1)
    tagger = tmp_path / "tagger.npz"
    assert run(capsys, "train", "pos", "--train", train, "--model", tagger, "--quiet")[0] == 0
    model = tmp_path / "dep.model"
    code, _, err = run(capsys, "train", "dep", "--train", train, "--model", model,
                       "--option", "pos=predicted", "--option", f"tagger_model={tagger}",
                       "--option", "hash_bits=16", "--option", "label_hash_bits=10",
                       "--option", "max_iter=3", "--quiet")
    assert code == 0, err
    tagger.unlink()  # the recorded path now leads nowhere
    lists = tmp_path / "train.kbest"
    code, _, err = run(capsys, "kbest", "--model", model, "--input", train, "--output", lists,
                       "-k", 2, "--folds", 2, "--quiet")
    assert code == 0, err
    assert not tagger.exists() and len(read_kbest(lists)[1]) == 40


@pytest.mark.slow
def test_jackknife_folds_in_parallel_give_the_serial_file(dep_setup, capsys):
    """--n-jobs 2 trains the 3 fold parsers in loky workers; the lists, gathered in fold
    order, are byte-identical to the serial run's, and the per-fold lines keep their order."""
    tmp_path, train, dev, model = dep_setup
    serial, parallel = tmp_path / "serial.kbest", tmp_path / "parallel.kbest"
    code, _, serr = run(capsys, "kbest", "--model", model, "--input", train, "--output",
                        serial, "-k", 3, "--folds", 3, "--n-jobs", 1)
    assert code == 0, serr
    assert "worker processes" not in serr
    code, _, err = run(capsys, "kbest", "--model", model, "--input", train, "--output",
                       parallel, "-k", 3, "--folds", 3, "--n-jobs", 2)
    assert code == 0, err
    warned = [[ln for ln in e.splitlines() if "warning" in ln] for e in (serr, err)]
    assert warned[0] == warned[1]  # the workers' warnings, issued here as serially
    assert "training 3 fold parsers in 2 worker processes" in err
    lines = [ln for ln in err.splitlines() if ln.startswith("fold ")]
    assert [ln.split(":")[0] for ln in lines] == ["fold 1/3", "fold 2/3", "fold 3/3"]
    assert serial.read_bytes() == parallel.read_bytes()
    assert len(read_kbest(parallel)[1]) == 40


@pytest.mark.parametrize("value", ["0", "-2"])
def test_kbest_n_jobs_out_of_range_exits_2(dep_setup, capsys, value):
    tmp_path, train, dev, model = dep_setup
    out = tmp_path / "x.kbest"
    code, _, err = run(capsys, "kbest", "--model", model, "--input", train, "--output", out,
                       "--folds", 2, "--n-jobs", value)
    assert code == 2 and "Traceback" not in err and not out.exists()
    assert err == ("latentstruct: error: --n-jobs must be a number of workers in [1, 1024] "
                   f"or -1 (all), got {value}\n")


def test_train_dep_takes_the_tasks_default_C_unless_given(dep_setup, capsys):
    """The dependency task sets the structural SVM's C (its features' scale needs a smaller
    one than the learner's generic 0.1); ``options`` says so and ``--option C=`` wins."""
    tmp_path, train, dev, model = dep_setup
    code, out, err = run(capsys, "info", "--model", model)
    assert code == 0, err
    params = json.loads(out)["learner_params"]
    assert (params["C"], params["tol"], params["evaluate"], params["inner_max_iter"],
            params["n_jobs"]) == (0.001, 0.1, "near", 2, -1)
    other = tmp_path / "c01.model"
    code, _, err = run(capsys, "train", "dep", "--train", train, "--model", other,
                       "--option", "hash_bits=16", "--option", "label_hash_bits=10",
                       "--option", "max_iter=2", "--option", "C=0.1", "--quiet")
    assert code == 0, err
    code, out, err = run(capsys, "info", "--model", other)
    assert json.loads(out)["learner_params"]["C"] == 0.1
    code, out, err = run(capsys, "options", "dep")
    assert code == 0, err
    assert ("task 'dep' sets C=0.001, tol=0.1, evaluate='near', inner_max_iter=2, n_jobs=-1 "
            "by default") in out
    assert any(line.split()[0] == "C=0.001" for line in out.splitlines() if line.strip())
    code, out, err = run(capsys, "options", "pos")  # other tasks keep the learner's own
    assert any(line.split()[0] == "C=0.1" for line in out.splitlines() if line.strip())
    assert "sets C=" not in out
