"""The long jobs of the README and the guide, at their defaults, against an earlier commit.

Each job is the command a user runs (``latentstruct train ...`` then ``latentstruct
evaluate ...``), run as a child process on ``$LATENTSTRUCT_DATA``:

==============  =================================================================  ==========
job             command (defaults unless said)                                     metric
==============  =================================================================  ==========
dep             ``train dep`` on UD EWT train                                      dev UAS
kbest           ``kbest --folds 4`` on EWT train with the baseline's ``dep`` model  (time)
msrp            ``train paraphrase --learner lclr`` on all MSRP training pairs     held-out acc.
grammaticality  ``train grammaticality --learner lclr-variant --option n_train=2000``  held-out acc.
jlis-pos        ``train pos --learner jlis`` with the J-LIS guide's options        dev accuracy
distro-xpos     ``train pos --learner distro --option tag_column=xpos``            dev accuracy
==============  =================================================================  ==========

For each job it prints the wall time, the CPU time of the child processes (user + system,
all their threads and workers), the learner's outer iterations, whether it converged, its
final objective and, for the structural SVM, the final relative duality gap, and the metric
on the job's evaluation data.

``--baseline REF`` runs the same jobs from a git worktree of REF (made under the temp
folder, removed at the end) **in the same run**, job by job, alternating which side goes
first, so the ratios compare the two commits on the same machine under the same load.  The
baseline side runs its own commit's code (``PYTHONPATH`` puts the worktree's ``src`` first)
with this environment's dependencies.  A job may run a different command on the baseline
side: ``dep`` runs ``--option max_iter=10`` there, the setting the README recommended
before the parser's defaults converged (issue 31).  Before the timed jobs, each side runs a
small warm-up of every selected job, so numba's compilation is not timed on either side.

The last line printed is one JSON object: per job and side the figures above, and per job
``time_ratio`` (this checkout's wall time / the baseline's).  The ``kbest`` job reads the
same model file on both sides: the baseline's ``dep`` model (``max_iter=10``), which loads
at either commit, so its ratio measures the jackknife itself (parallel folds), not the
parsers' settings; with no baseline it uses this checkout's ``dep`` model.

    python benchmarks/defaults.py [--jobs dep,kbest,msrp,grammaticality,jlis-pos,distro-xpos]
        [--baseline 201b135] [--keep DIR]

Needs ``LATENTSTRUCT_DATA``; msrp needs WordNet and spaCy's English pipeline.  All six jobs
at both commits take about two hours on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("LATENTSTRUCT_DATA", REPO.parent / "shared" / "data")).resolve()
EWT_TRAIN = DATA / "ud_english_ewt" / "en_ewt-ud-train.conllu"
EWT_DEV = DATA / "ud_english_ewt" / "en_ewt-ud-dev.conllu"
MSRP = DATA / "msrp" / "train.tsv"
SENTENCES = DATA / "english_sentences" / "reuters21578_sentences.txt"


@dataclass
class Job:
    """One long job: ``train`` (or ``run``) then ``evaluate``; ``{out}`` is the side's
    output folder, ``{small}`` a 60-sentence slice of EWT train (for warm-ups)."""

    train: list[str]
    evaluate: list[str] | None
    metric: str | None
    baseline_extra: list[str] = field(default_factory=list)
    warmup: list[str] | None = None
    needs: str | None = None


JOBS: dict[str, Job] = {
    "dep": Job(
        ["train", "dep", "--train", str(EWT_TRAIN), "--model", "{out}/dep.npz"],
        ["evaluate", "--model", "{out}/dep.npz", "--test", str(EWT_DEV)], "uas",
        baseline_extra=["--option", "max_iter=10"],
        warmup=["train", "dep", "--train", "{small}", "--model", "{out}/w.npz",
                "--option", "max_iter=2"]),
    "kbest": Job(
        ["kbest", "--model", "{model_dir}/dep.npz", "--input", str(EWT_TRAIN),
         "--output", "{out}/train.kbest", "--folds", "4"], None, None, needs="dep"),
    "msrp": Job(
        ["train", "paraphrase", "--train", str(MSRP), "--model", "{out}/para.npz",
         "--learner", "lclr"],
        ["evaluate", "--model", "{out}/para.npz", "--test", str(MSRP)], "accuracy",
        warmup=["train", "paraphrase", "--train", str(MSRP), "--model", "{out}/w.npz",
                "--learner", "lclr", "--option", "n_train=40", "--option", "max_iter=2"]),
    "grammaticality": Job(
        ["train", "grammaticality", "--train", str(SENTENCES), "--model", "{out}/variant.npz",
         "--learner", "lclr-variant", "--option", "n_train=2000"],
        ["evaluate", "--model", "{out}/variant.npz", "--test", str(SENTENCES)], "accuracy",
        warmup=["train", "grammaticality", "--train", str(SENTENCES), "--model", "{out}/w.npz",
                "--learner", "lclr-variant", "--option", "n_train=40", "--option", "max_iter=2"]),
    "jlis-pos": Job(
        ["train", "pos", "--train", str(EWT_TRAIN), "--model", "{out}/jlis.npz", "--learner",
         "jlis", "--option", "n_structured_tokens=200", "--option", "n_binary=1000",
         "--option", "C2=1.0"],
        ["evaluate", "--model", "{out}/jlis.npz", "--test", str(EWT_DEV)], "accuracy",
        warmup=["train", "pos", "--train", "{small}", "--model", "{out}/w.npz", "--learner",
                "jlis", "--option", "n_structured_tokens=100", "--option", "n_binary=20",
                "--option", "max_iter=1", "--option", "init_max_iter=1"]),
    "distro-xpos": Job(
        ["train", "pos", "--train", str(EWT_TRAIN), "--model", "{out}/xpos.npz", "--learner",
         "distro", "--option", "tag_column=xpos"],
        ["evaluate", "--model", "{out}/xpos.npz", "--test", str(EWT_DEV)], "accuracy",
        warmup=["train", "pos", "--train", "{small}", "--model", "{out}/w.npz", "--learner",
                "distro", "--option", "tag_column=xpos", "--option", "n_iter=1"]),
}


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def small_slice(path: Path, n_sentences: int, out: Path) -> Path:
    """The first ``n_sentences`` sentences of a CoNLL-U file (blank-line separated)."""
    blocks, current = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            current.append(line)
            if not line.strip():
                blocks.append("".join(current))
                current = []
                if len(blocks) == n_sentences:
                    break
    out.write_text("".join(blocks), encoding="utf-8")
    return out


class Side:
    """One commit's code: this checkout, or a worktree of ``ref`` on ``PYTHONPATH``."""

    def __init__(self, name: str, src: Path, out: Path, small: Path):
        self.name, self.src, self.out, self.small = name, src, out, small
        self.model_dir = out  # where the kbest job finds its dep model
        out.mkdir(parents=True, exist_ok=True)

    def run(self, argv: list[str], with_stderr: bool = False) -> tuple:
        """(wall s, children's CPU s, stdout[, stderr]) of ``latentstruct ARGV`` here."""
        argv = [a.format(out=self.out, small=self.small, model_dir=self.model_dir)
                for a in argv]
        env = dict(os.environ, PYTHONPATH=str(self.src), LATENTSTRUCT_DATA=str(DATA),
                   PYTHONHASHSEED="0")
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        # the console script's entry point (older commits have no ``__main__``)
        entry = "import sys; from latentstruct.cli import main; sys.exit(main())"
        proc = subprocess.run([sys.executable, "-c", entry, *argv], env=env,
                              capture_output=True, text=True)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        if proc.returncode != 0:
            raise RuntimeError(f"[{self.name}] latentstruct {' '.join(argv)} exited "
                               f"{proc.returncode}:\n{proc.stderr[-3000:]}")
        return (wall, cpu, proc.stdout, proc.stderr) if with_stderr else (wall, cpu, proc.stdout)

    def info(self, model: str) -> dict:
        return json.loads(self.run(["info", "--model", model])[2])


def learner_figures(meta: dict) -> dict:
    """Outer iterations, convergence, final objective and (SSVM) relative duality gap from
    a model file's metadata."""
    state = meta.get("learner_state", {})
    out = {"n_iter": state.get("n_iter_"), "converged": state.get("converged_")}
    curve = state.get("objective_curve_") or []
    dual = state.get("dual_curve_") or []
    if curve:
        out["objective"] = round(float(curve[-1]), 4)
    if curve and dual and len(dual) == len(curve):
        p, d = float(curve[-1]), float(dual[-1])
        out["gap"] = round((p - d) / max(p, 1e-12), 5)
    return out


def run_job(side: Side, name: str, job: Job) -> dict:
    argv = job.train + (job.baseline_extra if side.name == "baseline" else [])
    log(f"[{side.name}] {name}: latentstruct {' '.join(argv)}")
    wall, cpu, _, err = side.run(argv, with_stderr=True)
    fig = {"wall_s": round(wall, 1), "cpu_s": round(cpu, 1)}
    if job.train[0] == "train":
        fig.update(learner_figures(side.info(job.train[job.train.index("--model") + 1])))
        if fig.get("converged") is None:  # older model files do not say; the warning does
            fig["converged"] = "ConvergenceWarning" not in err
    if job.evaluate:
        eval_wall, _, out = side.run(job.evaluate)
        fig["eval_wall_s"] = round(eval_wall, 1)  # (numba compiles the decoder here too)
        fig[job.metric] = json.loads(out).get(job.metric)
    log(f"[{side.name}] {name}: {json.dumps(fig)}")
    return fig


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", default=",".join(JOBS),
                    help=f"comma-separated, from {', '.join(JOBS)} (default: all)")
    ap.add_argument("--baseline", metavar="REF", help="git ref to compare against in this run")
    ap.add_argument("--keep", metavar="DIR", help="keep the models and lists in DIR")
    args = ap.parse_args(argv)
    names = [j for j in args.jobs.split(",") if j]
    unknown = [j for j in names if j not in JOBS]
    if unknown:
        ap.error(f"unknown job(s) {', '.join(unknown)}; choose from {', '.join(JOBS)}")
    for j in names:
        need = JOBS[j].needs
        if need and need not in names:
            ap.error(f"job {j!r} uses the model of job {need!r}; add it to --jobs")
    if not EWT_TRAIN.exists():
        ap.error(f"no UD EWT under {DATA}; set LATENTSTRUCT_DATA")

    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="ls-defaults-"))
    work.mkdir(parents=True, exist_ok=True)
    small = small_slice(EWT_TRAIN, 60, work / "small.conllu")
    sides = [Side("current", REPO / "src", work / "current", small)]
    worktree = None
    try:
        if args.baseline:
            worktree = Path(tempfile.mkdtemp(prefix="ls-baseline-")) / "tree"
            subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach",
                            str(worktree), args.baseline], check=True, capture_output=True)
            rev = subprocess.run(["git", "-C", str(worktree), "rev-parse", "--short", "HEAD"],
                                 check=True, capture_output=True, text=True).stdout.strip()
            sides.append(Side("baseline", worktree / "src", work / "baseline", small))
            # kbest runs on one model file for both sides (the baseline's dep job's), so
            # its ratio measures the k-best machinery, not the parsers' training settings
            sides[0].model_dir = sides[1].out
            log(f"baseline {args.baseline} = {rev} at {worktree}")
        for side in sides:  # compile numba kernels on both sides before any timing
            for j in names:
                if JOBS[j].warmup:
                    log(f"[{side.name}] warm-up {j}")
                    side.run(JOBS[j].warmup)
        results: dict[str, dict] = {}
        for k, j in enumerate(names):
            order = sides if k % 2 == 0 else sides[::-1]
            results[j] = {s.name: run_job(s, j, JOBS[j]) for s in order}
            if len(sides) == 2:
                cur, base = results[j]["current"], results[j]["baseline"]
                results[j]["time_ratio"] = round(cur["wall_s"] / base["wall_s"], 3)
        line = {"benchmark": "defaults", "cores": os.cpu_count(),
                "load_avg_end": [round(x, 2) for x in os.getloadavg()],
                "baseline": args.baseline, "jobs": results}
        print(json.dumps(line))
    finally:
        if worktree is not None:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force",
                            str(worktree)], capture_output=True)
            shutil.rmtree(worktree.parent, ignore_errors=True)
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
