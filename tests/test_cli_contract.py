"""The command line's side of the task <-> learner contract: mismatches refused before data is
read, discoverable options, evaluation-time options only, explain only where it applies."""

import json


from latentstruct.cli import main


def run(capsys, *argv):
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse's --help
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def test_mismatched_learner_exits_2_with_the_valid_ones(tmp_path, capsys):
    model = tmp_path / "m.npz"
    code, out, err = run(capsys, "train", "translit", "--learner", "ssvm", "--model", str(model))
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err
    assert "'ssvm' cannot train task 'translit'" in lines[0]
    assert "Learners valid for 'translit': latent-pa, lclr, lclr-variant, two-stage" in lines[0]
    assert not model.exists()


def test_mismatch_is_found_before_any_data_is_read(tmp_path, capsys):
    missing = tmp_path / "no-such-file.txt"
    code, _, err = run(capsys, "train", "chunk", "--learner", "lclr", "--train", str(missing),
                       "--model", str(tmp_path / "m.npz"))
    assert code == 2 and "cannot train task 'chunk'" in err and "no-such-file" not in err


def test_jlis_without_binary_examples_says_how_to_give_them(tmp_path, capsys):
    missing = tmp_path / "no-such-file.conllu"
    code, _, err = run(capsys, "train", "pos", "--learner", "jlis", "--train", str(missing),
                       "--model", str(tmp_path / "m.npz"))
    assert code == 2 and "--option n_binary=N" in err and "no-such-file" not in err


def test_train_task_help_lists_options_defaults_and_learners(capsys):
    code, out, _ = run(capsys, "train", "chunk", "--help")
    assert code == 0
    assert "options of task 'chunk'" in out and "window=2" in out
    assert "options of learner 'ssvm'" in out and "C=0.1" in out and "Cost of the squared slacks" in out
    assert "learners valid for 'chunk':" in out and "ssvm" in out
    code, out, _ = run(capsys, "train", "translit", "--learner", "two-stage", "--help")
    assert code == 0 and "options of learner 'two-stage'" in out and "lang=he" in out
    code, out, _ = run(capsys, "train", "--help")  # fast: names only, no registry import
    assert code == 0 and "translit" in out and "latentstruct options" in out
    code, out, _ = run(capsys, "options")
    assert code == 0 and "translit" in out and "default learner lclr" in out


def test_evaluate_refuses_options_that_fed_the_features(chunk_model, tiny_chunk_file, capsys):
    code, out, err = run(capsys, "evaluate", "--model", str(chunk_model), "--test", str(tiny_chunk_file),
                         "--option", "window=0")
    assert code == 2 and out == ""
    assert "'window' cannot change at evaluate time" in err and len(err.strip().splitlines()) == 1
    code, _, err = run(capsys, "predict", "--model", str(chunk_model), "--input", str(tiny_chunk_file),
                       "--output", str(chunk_model.parent / "p.txt"), "--option", "C=5")
    assert code == 2 and "'C' cannot change at predict time" in err
    assert not (chunk_model.parent / "p.txt").exists()
    code, out, _ = run(capsys, "evaluate", "--model", str(chunk_model), "--test", str(tiny_chunk_file),
                       "--option", "n_jobs=2")
    assert code == 0 and json.loads(out)["f1"] == 1.0


def test_explain_refuses_a_pair_input_for_a_sequence_model(chunk_model, tmp_path, capsys):
    code, out, err = run(capsys, "explain", "--model", str(chunk_model), "--source", "a",
                         "--target", "b", "--out", str(tmp_path / "x.txt"))
    assert code == 2 and out == "" and "Traceback" not in err
    assert "is a 'chunk' model: give --input FILE (its sentences)" in err
    assert not (tmp_path / "x.txt").exists()


def test_pos_task_runs_jlis_to_convergence_by_default(capsys):
    """J-LIS's class default max_iter=20 stopped the guide's POS job unconverged; the POS task
    gives it 50 from the command line (any given max_iter wins)."""
    from latentstruct.learners import JLIS
    from latentstruct.tasks import PosTask
    from latentstruct.tasks.base import learner_defaults_for

    assert JLIS().max_iter == 20 and learner_defaults_for(PosTask, JLIS) == {"max_iter": 50}
    code, out, _ = run(capsys, "options", "pos", "--learner", "jlis")
    assert code == 0 and "task 'pos' sets max_iter=50" in out
    assert "\n  max_iter=50 " in out


def test_no_option_name_belongs_to_both_a_task_and_a_learner_that_trains_it():
    """--option KEY=VALUE is routed by name, so a name shared by a task and a learner valid
    for it would make every `train` of that pair fail (doccls's `features` and an early
    name of crf's `feature_set` did)."""
    from latentstruct.cli.common import route_options
    from latentstruct.learners import LEARNERS, valid_learners
    from latentstruct.tasks import TASKS

    for task_name in sorted(TASKS):
        task_cls = TASKS[task_name]
        for learner_name in valid_learners(task_cls):
            learner_cls = LEARNERS[learner_name]
            shared = set(task_cls.param_defaults()) & (
                set(learner_cls().get_params(deep=False)) - {"structure"})
            assert not shared, (task_name, learner_name, shared)
            assert route_options([], task_cls, learner_cls) == ({}, {})
