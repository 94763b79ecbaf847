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
the speed-up at 10 and 100 workers (``--bandwidth``: the network it assumes).  Each parallel
backend's ``breakdown`` says where its passes' time went, from the time stamps the workers
return with each chunk (``parallel.pass_log``): the busiest worker's kernel time, the
imbalance, the loading of shared data, and the overhead per chunk (driver work, dispatch,
collection) that the model calls ``c``.

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
    from latentstruct.tasks.pairs import ParaphraseTask

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
    """One fit on a fresh copy of X: (seconds, model, its passes).  The passes are logged
    (``parallel.pass_log`` without byte counts: a few time stamps per chunk) for the
    per-chunk cost of the cost model."""
    from latentstruct.parallel import pass_log

    X = cold(X)
    with warnings.catch_warnings(), pass_log(count_bytes=False) as passes:
        warnings.simplefilter("ignore", ConvergenceWarning)
        t = time.perf_counter()
        model = make(n_jobs).fit(X, Y)
        return time.perf_counter() - t, model, passes


def repeated_fit(make, X, Y, n_jobs, repeats):
    """The median wall time of ``repeats`` timed fits (this machine's fit times vary by
    about 10 % from run to run), the last model, every time, and the passes of the median
    fit."""
    runs = [timed_fit(make, X, Y, n_jobs) for _ in range(repeats)]
    times = [round(t, 2) for t, _, _ in runs]
    median = sorted(runs, key=lambda r: r[0])[(len(runs) - 1) // 2]
    return float(np.median(times)), runs[-1][1], times, median[2]


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

    X = cold(X)
    with warnings.catch_warnings(), pass_log() as passes:
        warnings.simplefilter("ignore", ConvergenceWarning)
        t = time.perf_counter()
        make(1).fit(X, Y)
        total_s = time.perf_counter() - t
    inference_s = sum(p["seconds"] for p in passes)
    return {"passes": len(passes), "fit_s": round(total_s, 3),
            "inference_s": round(inference_s, 3),
            "serial_s": round(max(total_s - inference_s, 0.0), 3),
            "arg_bytes_per_pass": int(np.mean([p["arg_bytes"] for p in passes])) if passes else 0,
            "result_bytes_per_pass": int(np.mean([p["result_bytes"] for p in passes]))
            if passes else 0}


def pass_breakdown(passes, workers):
    """Where the wall time of a parallel fit's passes went, from ``parallel.pass_log``'s
    time stamps (the driver's and the workers' ``perf_counter``: one clock on one machine).

    Per pass, the workers' *span* is the kernel time of the busiest worker; *imbalance* is
    the span less the mean kernel time per worker (what an uneven cut costs); *setup* is
    the time a worker spent loading the shared data before its chunk (once per block and
    worker); the *overhead* is the rest of the pass's wall time, ``wall - span - setup``:
    the driver's own work (``prep``: cutting the pass; then wiring, pickling, submitting),
    the wait until the first worker starts (``dispatch``), the later start of the other
    workers, and the wait after the last one ends until its results are in (``collect``).
    The per-chunk cost ``c`` is the overhead divided by the number of chunks, over all
    passes.  ``inflation`` is the workers' total kernel time against the serial
    inference time (contention for cores, caches rebuilt in each worker);
    ``imbalance_cpu_share`` the imbalance of the workers' CPU times (the cut's own, where
    other load on the machine stretches wall times unevenly)."""
    par = [p for p in passes if p.get("chunks")]
    if not par:
        return None
    keys = ("wall", "span", "imbalance", "imbalance_cpu", "setup", "overhead", "prep",
            "dispatch", "collect", "busy", "cpu")
    tot = dict.fromkeys(keys, 0.0)
    chunks = 0
    for p in par:
        per_worker: dict = {}
        for c in p["chunks"]:
            w = per_worker.setdefault(c["worker"], [0.0, 0.0, np.inf, -np.inf, 0.0])
            w[0] += c["busy"]
            w[1] += c["setup"]
            w[2] = min(w[2], c["began"] - c["setup"])
            w[3] = max(w[3], c["ended"])
            w[4] += c["cpu"]
        busy = sum(w[0] for w in per_worker.values())
        cpu = sum(w[4] for w in per_worker.values())
        n_workers = min(workers, len(p["chunks"]))
        tot["cpu"] += cpu
        tot["imbalance_cpu"] += max(w[4] for w in per_worker.values()) - cpu / n_workers
        span = max(w[0] for w in per_worker.values())
        setup = max(w[1] for w in per_worker.values())
        tot["wall"] += p["seconds"]
        tot["span"] += span
        tot["busy"] += busy
        tot["imbalance"] += span - busy / n_workers
        tot["setup"] += setup
        tot["overhead"] += p["seconds"] - span - setup
        tot["prep"] += p["began"] - p["called"]
        tot["dispatch"] += min(w[2] for w in per_worker.values()) - p["began"]
        tot["collect"] += p["ended"] - max(w[3] for w in per_worker.values())
        chunks += len(p["chunks"])
    out = {k: round(v, 4) for k, v in tot.items()}
    out.update(passes=len(par), chunks=chunks,
               per_chunk_s=round(tot["overhead"] / chunks, 5),
               imbalance_share=round(tot["imbalance"] / max(tot["busy"] / workers, 1e-9), 4),
               # the same from CPU times: the cut's own imbalance, without other load's
               imbalance_cpu_share=round(tot["imbalance_cpu"] / max(tot["cpu"] / workers, 1e-9),
                                         4),
               per_chunk_parts_ms={k: round(1e3 * tot[k] / chunks, 2)
                                   for k in ("prep", "dispatch", "collect", "overhead")})
    return out


def predict_speedup(profile, per_chunk_s, workers, bandwidth, imbalance=0.0, setup_s=0.0):
    """T(P) = T_serial + T_inference (1 + u) / P + setup + passes * (P * per_chunk_s +
    (P * w_bytes + result_bytes) / bandwidth), against T(1) = T_serial + T_inference;
    ``u`` is the measured imbalance share (of CPU times), ``setup`` the workers' loading of
    the shared data (once per fit, in parallel)."""
    t1 = profile["serial_s"] + profile["inference_s"]
    comm = (workers * profile["arg_bytes_per_pass"] + profile["result_bytes_per_pass"]) / bandwidth
    tp = (profile["serial_s"] + profile["inference_s"] * (1 + imbalance) / workers + setup_s
          + profile["passes"] * (workers * per_chunk_s + comm))
    return t1 / tp


def cost_model(profile, out, workers, bandwidth):
    """The per-chunk cost measured in the Dask run at ``workers`` (``breakdown``: the
    passes' overhead per chunk, imbalance and data loading apart) and the speed-up it
    predicts at 10 and 100 workers (docs/scaling.md).  ``lumped_per_chunk_s`` is the
    former fit, (fit time - ideal time) / (passes * workers), which charged everything
    (imbalance, contention, the serial part's own variation) to the chunks."""
    dask = out.get("dask", {})
    if "fit_s" not in dask or not profile["passes"]:
        return None
    t_ideal = profile["serial_s"] + profile["inference_s"] / workers
    lumped = max(dask["fit_s"] - t_ideal, 0.0) / (profile["passes"] * workers)
    b = dask.get("breakdown")
    per_chunk = b["per_chunk_s"] if b else lumped
    u = b["imbalance_cpu_share"] if b else 0.0  # the cut's own (wall times add other load's)
    setup = b["setup"] if b else 0.0
    return {"per_chunk_s": round(per_chunk, 5), "lumped_per_chunk_s": round(lumped, 5),
            "imbalance_share": u, "setup_s": setup, "bandwidth_bytes_s": bandwidth,
            "inference_share": round(profile["inference_s"] / max(profile["fit_s"], 1e-9), 3),
            "amdahl_bound": round(profile["fit_s"] / max(profile["serial_s"], 1e-9), 2),
            "predicted_speedup": {str(p): round(predict_speedup(profile, per_chunk, p,
                                                                bandwidth, u, setup), 2)
                                  for p in (workers, 10, 100)}}


def run_job(name, job, backends, workers, bandwidth, repeats):
    make, X, Y, weights = job
    log(f"[{name}] {len(X)} examples; serial fit ...")
    warm_up(make, X, Y, 1)
    serial_s, serial, serial_runs, _ = repeated_fit(make, X, Y, 1, repeats)
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
            fit_s, model, runs, passes = repeated_fit(make, X, Y, workers, repeats)
        diff = float(np.max(np.abs(weights(model) - weights(serial)))) if len(weights(serial)) else 0.0
        breakdown = pass_breakdown(passes, workers)
        if breakdown:
            breakdown["inflation"] = round(breakdown["busy"] / max(profile["inference_s"], 1e-9),
                                           3)
        out[backend] = {"fit_s": round(fit_s, 2), "speedup": round(serial_s / fit_s, 3),
                        "max_abs_diff": diff, "start_s": round(start_s, 2), "runs_s": runs,
                        "breakdown": breakdown}
        log(f"[{name}] {backend}: {fit_s:.1f}s, speed-up {serial_s / fit_s:.2f}x, "
            f"max |coef diff| {diff:.1e} (cluster start {start_s:.1f}s; runs {runs})")
        if breakdown:
            log(f"[{name}] {backend}: per chunk {1e3 * breakdown['per_chunk_s']:.1f} ms "
                f"({breakdown['per_chunk_parts_ms']}); imbalance "
                f"{100 * breakdown['imbalance_share']:.1f} % (CPU times: "
                f"{100 * breakdown['imbalance_cpu_share']:.1f} %); workers' kernel time "
                f"{breakdown['inflation']:.2f}x the serial inference")
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
