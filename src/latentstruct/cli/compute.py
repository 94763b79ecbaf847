"""Where a command's inference runs: ``--n-jobs N``, ``--backend threads|processes|dask|ray``
and ``--scheduler ADDRESS``.

The library's one parallel seam is joblib (``latentstruct.parallel``): a learner's passes
over examples honour a surrounding ``joblib.parallel_config``.  These options set that
configuration for the command and, for a cluster, connect to it (or start a loopback one
with ``--scheduler local``), then hand the learner ``n_jobs``:

* ``--backend`` alone takes every worker the backend has (``n_jobs=-1``: all cores for
  threads and processes, all worker cores of a Dask or Ray cluster);
* ``--n-jobs N`` alone keeps the default thread backend with N threads.

Everything is checked before data is read: the extra a backend needs (``pip install
'latentstruct[distributed]'``), a scheduler given without a cluster backend, and a learner
that cannot run its inference in parallel.
"""

from __future__ import annotations

import os
import sys
from contextlib import ExitStack, contextmanager

from ..exceptions import ConfigError

__all__ = ["BACKENDS", "add_compute_args", "check_compute_args", "compute_context",
           "learner_n_jobs"]

#: CLI name -> joblib backend name
BACKENDS = {"threads": "threading", "processes": "loky", "dask": "dask", "ray": "ray"}
_CLUSTER = ("dask", "ray")


def add_compute_args(parser) -> None:
    """Add ``--n-jobs``, ``--backend`` and ``--scheduler`` to an argparse (sub)parser."""
    parser.add_argument("--n-jobs", type=int, default=None, dest="n_jobs", metavar="N",
                        help="parallel workers for inference over examples (default 1; with "
                             "--backend, all the backend's workers; -1: all)")
    parser.add_argument("--backend", choices=tuple(BACKENDS), default=None,
                        help="where inference runs: threads (default), processes (loky), "
                             "dask or ray (pip install 'latentstruct[distributed]')")
    parser.add_argument("--scheduler", metavar="ADDRESS", default=None,
                        help="with --backend dask: a scheduler address (tcp://host:8786); "
                             "with --backend ray: a Ray address (host:6379 or auto); "
                             "'local' (the default) starts a loopback cluster on this machine")


def check_compute_args(args, learner_cls) -> None:
    """Refuse bad combinations before any data is read (exit 2 through ConfigError);
    ``learner_cls`` is None when the learner is known only once a model is loaded."""
    from ..limits import N_JOBS

    n_jobs, backend, scheduler = (getattr(args, k, None) for k in ("n_jobs", "backend",
                                                                   "scheduler"))
    if n_jobs is not None and (isinstance(n_jobs, bool) or n_jobs == 0 or n_jobs < -1):
        raise ConfigError(f"--n-jobs must be a number of workers in [1, {N_JOBS.high}] or -1 "
                          f"(all), got {n_jobs}")
    if n_jobs is not None and n_jobs > N_JOBS.high:
        raise ConfigError(f"--n-jobs must be a number of workers in [1, {N_JOBS.high}] or -1 "
                          f"(all), got {n_jobs:,}: {N_JOBS.why('--n-jobs', n_jobs, 1)}")
    if scheduler is not None and backend not in _CLUSTER:
        raise ConfigError(f"--scheduler {scheduler} needs --backend dask or --backend ray "
                          f"(it names the cluster to run on)")
    given = [o for o in getattr(args, "option", None) or [] if isinstance(o, str)
             and o.split("=", 1)[0].strip() == "n_jobs"]
    if (n_jobs is not None or backend is not None) and given:
        raise ConfigError("--n-jobs/--backend and --option n_jobs=... both set the number of "
                          "workers; give --n-jobs only")
    if n_jobs in (None, 1) and backend is None:
        return
    if learner_cls is not None and "n_jobs" not in learner_cls().get_params(deep=False):
        raise ConfigError(f"learner {learner_cls.registry_name!r} updates its weights after "
                          f"every example, so its inference cannot run in parallel; drop "
                          f"--n-jobs/--backend")
    if backend in _CLUSTER:
        _require_extra(backend)


def _require_extra(backend: str) -> None:
    import importlib.util

    modules = {"dask": ("dask", "distributed"), "ray": ("ray",)}[backend]
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        raise ConfigError(f"--backend {backend} needs {', '.join(missing)}, which is not "
                          f"installed; pip install 'latentstruct[distributed]'")


def learner_n_jobs(args, learner_cls=None):
    """The learner's ``n_jobs`` for these options, or None to leave the learner's own.

    None too for a learner without ``n_jobs`` (it updates its weights after every example,
    so it runs serially): ``check_compute_args`` refused any count but 1 for it, and 1 is
    what it does."""
    if learner_cls is not None and "n_jobs" not in learner_cls().get_params(deep=False):
        return None
    n_jobs, backend = getattr(args, "n_jobs", None), getattr(args, "backend", None)
    if n_jobs is not None:
        return n_jobs
    return -1 if backend is not None else None


@contextmanager
def compute_context(args, *, quiet: bool = False):
    """Within the block, parallel passes run on the chosen backend (a no-op for the default
    threads with no ``--backend``); a loopback cluster started here is stopped at its end."""
    backend = getattr(args, "backend", None)
    if backend is None:
        yield
        return
    from joblib import parallel_config

    n_jobs = learner_n_jobs(args)
    with ExitStack() as stack:
        if backend == "dask":
            stack.enter_context(_dask_client(args.scheduler, n_jobs, quiet))
        elif backend == "ray":
            stack.enter_context(_ray_session(args.scheduler, n_jobs, quiet))
        stack.enter_context(parallel_config(backend=BACKENDS[backend], n_jobs=n_jobs))
        yield


def _local_workers(n_jobs) -> int:
    return os.cpu_count() or 1 if n_jobs in (None, -1) else int(n_jobs)


@contextmanager
def _dask_client(address, n_jobs, quiet: bool):
    from distributed import Client, LocalCluster

    with ExitStack() as stack:
        if address in (None, "local"):
            # processes, not threads: the point of a cluster backend is to leave one
            # process's GIL; loopback only, no dashboard
            cluster = stack.enter_context(LocalCluster(
                n_workers=_local_workers(n_jobs), threads_per_worker=1, processes=True,
                host="127.0.0.1", dashboard_address=None))
            client = stack.enter_context(Client(cluster))
        else:
            try:
                client = stack.enter_context(Client(address, timeout="10s"))
            except (OSError, TimeoutError, ValueError) as e:
                raise ConfigError(f"--scheduler {address}: cannot reach a Dask scheduler "
                                  f"there ({e}); start one with `dask scheduler` and workers "
                                  f"with `dask worker {address}`, or use --scheduler local") from e
        if not quiet:
            n = len(client.scheduler_info().get("workers", {}))
            print(f"latentstruct: Dask cluster with {n} workers at {client.scheduler.address}",
                  file=sys.stderr)
        yield client


@contextmanager
def _ray_session(address, n_jobs, quiet: bool):
    import ray
    from ray.util.joblib import register_ray

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    kwargs = dict(include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    if address in (None, "local"):
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
        kwargs.update(num_cpus=_local_workers(n_jobs), _node_ip_address="127.0.0.1")
    else:
        kwargs["address"] = address
    try:
        ray.init(**kwargs)
    except (ConnectionError, ValueError, RuntimeError) as e:
        raise ConfigError(f"--scheduler {address}: cannot connect to a Ray cluster ({e}); "
                          f"start one with `ray start --head`, or use --scheduler local") from e
    try:
        register_ray()
        if not quiet:
            cpus = int(ray.cluster_resources().get("CPU", 0))
            print(f"latentstruct: Ray cluster with {cpus} CPUs", file=sys.stderr)
        yield
    finally:
        ray.shutdown()
