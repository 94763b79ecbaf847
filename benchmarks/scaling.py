"""Speed-up at N workers against 1, per joblib backend, for two jobs (issue: scale-out).

* **LCLR on MSRP** (graph-alignment ILP inference dominates): ``--msrp-pairs`` training pairs
  of ``msrp/train.tsv`` (the task's seeded training portion), ``--lclr-iter`` outer
  iterations.
* **StructuredSVM, batch mode, on CoNLL-2000 chunking** (Viterbi inference in parallel, DCD
  serial): the first ``--conll-sentences`` sentences of ``conll2000/train.txt``,
  ``--ssvm-iter`` batch cutting-plane iterations.

Each job is featurised once; then the *same* fit runs serially (``n_jobs=1``) and with
``--workers`` workers on each backend: threads, processes (loky), a loopback Dask
``LocalCluster`` (one single-threaded worker process per worker, 127.0.0.1) and a local Ray
instance (``num_cpus=workers``).  Pools and clusters are started, and their workers warmed
by a small fit (numba kernels loaded, modules imported), before the timed fit: the figures
are steady-state, as on a long-lived cluster; a cluster's start-up time is reported apart.
Every timed fit, serial included, gets a fresh copy of the featurised examples (nothing a
previous fit cached on them: see ``cold``), and each configuration is timed ``--repeats``
times, the median reported (single fits vary by about 10 % here).
Every parallel model is compared with the serial one (``max_abs_diff`` of ``coef_``): the
backends must learn the same model.

The last line of output is one JSON object with, per job and backend, the fit time, the
speed-up (serial time / backend time) and the model difference; ``target_met`` says whether
LCLR reached a speed-up of ``--target`` with processes and with Dask.  ``profile`` and
``model`` are the cost model of docs/scaling.md: a profiled serial fit gives the inference
share and the bytes per pass, the Dask run gives the per-chunk cost, and the model predicts
the speed-up at 10 and 100 workers (``--bandwidth``: the network it assumes).

    python benchmarks/scaling.py [--workers 2] [--msrp-pairs 300] [--lclr-iter 3]
        [--conll-sentences 2000] [--ssvm-iter 8] [--backends threads,processes,dask,ray]
        [--only lclr,ssvm] [--target 1.6] [--repeats 3]

Needs ``pip install 'latentstruct[distributed]'`` for Dask and Ray (a missing one is
skipped and said), WordNet and spaCy's English pipeline for MSRP, and ``LATENTSTRUCT_DATA``.
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import json
import os
import sys
import time
import types
import warnings
from pathlib import Path

import numpy as np

from latentstruct.cli.compute import compute_context
from latentstruct.exceptions import ConvergenceWarning
from latentstruct.learners import LCLR, StructuredSVM

BACKENDS = ("threads", "processes", "dask", "ray")


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def data_root() -> Path:
    return Path(os.environ.get("LATENTSTRUCT_DATA", Path(__file__).resolve().parents[1].parent
                               / "shared" / "data"))


def msrp_job(args):
    from latentstruct.tasks.graph_pairs import ParaphraseTask

    task = ParaphraseTask(n_train=args.msrp_pairs, seed=0)
    train = task.read(data_root() / "msrp" / "train.tsv", split="train")
    task.fit(train)
    X, y = task.featurize(train), task.encode_targets(train.targets)

    def make(n_jobs, max_iter=args.lclr_iter):
        return LCLR(task, C=1.0, max_iter=max_iter, random_state=0, n_jobs=n_jobs)

    return make, X, y, lambda m: m.coef_


def conll_job(args):
    from latentstruct.tasks import ChunkTask

    path = data_root() / "conll2000" / "train.txt"
    lines, sentences = [], 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            lines.append(line)
            if not line.strip():
                sentences += 1
                if sentences >= args.conll_sentences:
                    break
    sub = Path(os.environ.get("TMPDIR", "/tmp")) / f"scaling-conll-{os.getpid()}.txt"
    sub.write_text("".join(lines), encoding="utf-8")
    try:
        task = ChunkTask()
        ds = task.read(sub)
    finally:
        sub.unlink()
    task.fit(ds)
    X, Y = task.featurize(ds), task.encode_targets(ds.targets)

    def make(n_jobs, max_iter=args.ssvm_iter):
        # tol=0: the same number of iterations in every run, whatever the timing
        return StructuredSVM(task, C=0.1, mode="batch", max_iter=max_iter, tol=1e-12,
                             random_state=0, n_jobs=n_jobs)

    return make, X, Y, lambda m: m.coef_


def cold(X):
    """A fresh copy of the examples, as featurising leaves them: without what earlier fits
    cached on them (an MSRP pair keeps its HiGHS model, ~3 ms to build, after its first
    decode).  Every timed fit starts from one, serial or parallel: in this process the
    serial and thread fits would otherwise reuse the models earlier fits built, while
    process and cluster workers always receive examples without them."""
    return copy.deepcopy(X)


def timed_fit(make, X, Y, n_jobs):
    X = cold(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        t = time.perf_counter()
        model = make(n_jobs).fit(X, Y)
        return time.perf_counter() - t, model


def repeated_fit(make, X, Y, n_jobs, repeats):
    """The median wall time of ``repeats`` timed fits (this machine's fit times vary by
    about 10 % from run to run), the last model, and every time."""
    times, model = [], None
    for _ in range(repeats):
        t, model = timed_fit(make, X, Y, n_jobs)
        times.append(round(t, 2))
    return float(np.median(times)), model, times


def warm_up(make, X, Y, n_jobs):
    """A small fit on the same backend: workers import the modules, load the numba kernels
    and (for LCLR) build their first ILP models."""
    k = min(len(X), 40)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        make(n_jobs, 1).fit(X[:k], Y[:k])


def available(backend: str) -> bool:
    need = {"dask": ("dask", "distributed"), "ray": ("ray",)}.get(backend, ())
    return all(importlib.util.find_spec(m) is not None for m in need)


def profile_serial(make, X, Y):
    """One more serial fit under ``parallel.pass_log``: the inference passes' share of the
    time and the bytes each pass would move (docs/scaling.md's cost model)."""
    from latentstruct.parallel import pass_log

    with pass_log() as passes:
        total_s, _ = timed_fit(make, X, Y, 1)
    inference_s = sum(p["seconds"] for p in passes)
    return {"passes": len(passes), "fit_s": round(total_s, 3),
            "inference_s": round(inference_s, 3),
            "serial_s": round(max(total_s - inference_s, 0.0), 3),
            "arg_bytes_per_pass": int(np.mean([p["arg_bytes"] for p in passes])) if passes else 0,
            "result_bytes_per_pass": int(np.mean([p["result_bytes"] for p in passes]))
            if passes else 0}


def predict_speedup(profile, per_chunk_s, workers, bandwidth):
    """T(P) = T_serial + T_inference/P + passes * (P * per_chunk_s + (P * w_bytes +
    result_bytes) / bandwidth), against T(1) = T_serial + T_inference."""
    t1 = profile["serial_s"] + profile["inference_s"]
    comm = (workers * profile["arg_bytes_per_pass"] + profile["result_bytes_per_pass"]) / bandwidth
    tp = (profile["serial_s"] + profile["inference_s"] / workers
          + profile["passes"] * (workers * per_chunk_s + comm))
    return t1 / tp


def cost_model(profile, out, workers, bandwidth):
    """Fit the per-chunk cost from the measured Dask run at ``workers`` and predict the
    speed-up at 10 and 100 workers (docs/scaling.md)."""
    dask = out.get("dask", {})
    if "fit_s" not in dask or not profile["passes"]:
        return None
    t_ideal = profile["serial_s"] + profile["inference_s"] / workers
    per_chunk = max(dask["fit_s"] - t_ideal, 0.0) / (profile["passes"] * workers)
    return {"per_chunk_s": round(per_chunk, 5), "bandwidth_bytes_s": bandwidth,
            "inference_share": round(profile["inference_s"] / max(profile["fit_s"], 1e-9), 3),
            "amdahl_bound": round(profile["fit_s"] / max(profile["serial_s"], 1e-9), 2),
            "predicted_speedup": {str(p): round(predict_speedup(profile, per_chunk, p,
                                                                bandwidth), 2)
                                  for p in (workers, 10, 100)}}


def run_job(name, job, backends, workers, bandwidth, repeats):
    make, X, Y, weights = job
    log(f"[{name}] {len(X)} examples; serial fit ...")
    warm_up(make, X, Y, 1)
    serial_s, serial, serial_runs = repeated_fit(make, X, Y, 1, repeats)
    log(f"[{name}] serial: {serial_s:.1f}s ({serial.n_iter_} iterations; runs {serial_runs})")
    out = {"n_examples": len(X), "n_iter": int(serial.n_iter_), "serial_s": round(serial_s, 2),
           "serial_runs_s": serial_runs}
    profile = profile_serial(make, X, Y)
    out["profile"] = profile
    log(f"[{name}] profile: {profile['passes']} passes, inference {profile['inference_s']:.1f}s"
        f" of {profile['fit_s']:.1f}s; {profile['arg_bytes_per_pass']} B out and "
        f"{profile['result_bytes_per_pass']} B back per pass")
    for backend in backends:
        if not available(backend):
            log(f"[{name}] {backend}: skipped (pip install 'latentstruct[distributed]')")
            out[backend] = {"skipped": "not installed"}
            continue
        t = time.perf_counter()
        ns = types.SimpleNamespace(backend=backend, n_jobs=workers, scheduler="local")
        with compute_context(ns, quiet=True):
            start_s = time.perf_counter() - t
            warm_up(make, X, Y, workers)
            fit_s, model, runs = repeated_fit(make, X, Y, workers, repeats)
        diff = float(np.max(np.abs(weights(model) - weights(serial)))) if len(weights(serial)) else 0.0
        out[backend] = {"fit_s": round(fit_s, 2), "speedup": round(serial_s / fit_s, 3),
                        "max_abs_diff": diff, "start_s": round(start_s, 2), "runs_s": runs}
        log(f"[{name}] {backend}: {fit_s:.1f}s, speed-up {serial_s / fit_s:.2f}x, "
            f"max |coef diff| {diff:.1e} (cluster start {start_s:.1f}s; runs {runs})")
    out["model"] = cost_model(profile, out, workers, bandwidth)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--msrp-pairs", type=int, default=300)
    ap.add_argument("--lclr-iter", type=int, default=3)
    ap.add_argument("--conll-sentences", type=int, default=2000)
    ap.add_argument("--ssvm-iter", type=int, default=8)
    ap.add_argument("--backends", default=",".join(BACKENDS))
    ap.add_argument("--only", default="lclr,ssvm")
    ap.add_argument("--target", type=float, default=1.6)
    ap.add_argument("--repeats", type=int, default=3,
                    help="timed fits per configuration; the median is reported (default 3)")
    ap.add_argument("--bandwidth", type=float, default=125e6,
                    help="network bytes/s assumed by the cost model (default 1 Gbit/s)")
    args = ap.parse_args(argv)
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    bad = [b for b in backends if b not in BACKENDS]
    if bad:
        ap.error(f"unknown backend(s) {bad}; expected some of {', '.join(BACKENDS)}")
    jobs = {"lclr": ("lclr_msrp", msrp_job), "ssvm": ("ssvm_batch_conll2000", conll_job)}
    only = [j.strip() for j in args.only.split(",") if j.strip()]
    if args.repeats < 1:
        ap.error("--repeats must be at least 1")
    result = {"benchmark": "scaling", "workers": args.workers, "cpu_count": os.cpu_count(),
              "repeats": args.repeats}
    for key in only:
        if key not in jobs:
            ap.error(f"unknown job {key!r}; expected lclr or ssvm")
        name, build = jobs[key]
        result[name] = run_job(name, build(args), backends, args.workers, args.bandwidth,
                               args.repeats)
    lclr = result.get("lclr_msrp", {})
    speedups = [lclr.get(b, {}).get("speedup") for b in ("processes", "dask")]
    result["target"] = args.target
    result["target_met"] = bool(speedups and all(s is not None and s >= args.target
                                                 for s in speedups))
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
