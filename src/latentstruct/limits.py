"""Upper bounds on the options that size memory or time.

A value far past one of these limits cannot be meant: it would exhaust memory or run for
days (``latentstruct kbest -k 100000000`` grew past 4.7 GB in 25 s on a short sentence).
Each bounded option has one :class:`Bound`, and one check that every command runs:

* learner hyperparameters through their ``_parameter_constraints``
  (``Interval(..., bound=B)``, scikit-learn's message), in ``fit``, ``latentstruct train``
  and, for the evaluation-time ones (``n_jobs``), ``evaluate``/``predict``/``kbest``/``explain``;
* task parameters through the task's ``_parameter_constraints`` (``bounded(B)``, the same message), checked by ``Task.check_params`` on entering ``fit``;
* command-line flags (``-k``, ``--folds``, ``--top``, ``--n-jobs``) through
  :func:`check_bounded` with the flag's name.

The error states what the refused value would have cost, what the limit costs and what the
default costs, as ``hash_bits`` does.  The README's "Reliability" section lists the limits.
This module imports nothing from the rest of the package, so every layer may use it.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Callable

from .exceptions import ConfigError

__all__ = ["Bound", "BOUNDS", "check_bounded", "size_text", "duration_text", "passes",
           "solver_epochs", "N_JOBS", "KBEST_K", "FOLDS", "TOP", "WINDOW", "AFFIX_LENGTH",
           "NEGATIVES_PER_POSITIVE", "NEGATIVE_RATIO", "NEGATIVE_SETS", "N_COMPONENTS",
           "MAX_WEIGHTS", "CHUNKER_EPOCHS", "MAX_NEGATIVE_UPDATES", "DEP_HASH_BITS",
           "LABEL_HASH_BITS", "RERANK_HASH_BITS", "N_HIDDEN", "MAX_SUPERSENSES",
           "MAX_ATTRIBUTE_VALUE"]


def _finite(value) -> float:
    """``value`` as a float; an integer beyond any float (``10**400``) is infinity, so a
    cost message about it says "inf" instead of failing with OverflowError."""
    try:
        return float(value)
    except OverflowError:
        return float("inf") if value > 0 else float("-inf")


def size_text(n_bytes: float) -> str:
    """``n_bytes`` in binary units: ``"512 MiB"``, ``"7.3 TiB"``."""
    n = _finite(n_bytes)
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:,.0f} {unit}" if unit == "bytes" or n >= 10 else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")  # pragma: no cover


def duration_text(seconds: float) -> str:
    """``seconds`` in the largest fitting unit: ``"2.8 hours"``, ``"31.7 years"``."""
    s = _finite(seconds)
    for unit, length in (("years", 365.25 * 86400), ("days", 86400), ("hours", 3600),
                         ("minutes", 60)):
        if s >= length:
            return f"{s / length:,.1f} {unit}"
    if s >= 1:
        return f"{s:,.0f} seconds"
    return f"{s * 1000:,.0f} ms" if s >= 1e-3 else f"{s * 1e6:,.0f} µs"


@dataclass(frozen=True)
class Bound:
    """The range of an integer option, and what one value costs.

    ``sizes`` says what the option sizes and how the cost is counted (a sentence fragment);
    ``cost(value)`` is the memory or time one value takes (``"512 MiB per label"``);
    ``protects`` is ``"memory"`` or ``"time"`` (for the README's table).
    """

    high: int
    sizes: str
    cost: Callable[[int], str]
    protects: str
    low: int = 1

    def why(self, name: str, value, default=None) -> str:
        """Why ``value`` (above ``high``) is refused: what it would cost, what the limit
        and the default cost (the shape of the ``hash_bits`` message)."""
        text = (f"{self.sizes} ({self.cost(value)} at {name}={value:,}); {self.high:,} "
                f"already takes {self.cost(self.high)}")
        if isinstance(default, numbers.Integral) and not isinstance(default, bool) \
                and self.low <= default <= self.high:
            text += f", the default {default:,} takes {self.cost(default)}"
        return text


def passes(what: str = "a pass over the training data that decodes every example") -> Bound:
    """The bound of a count of training passes (``max_iter``, ``n_epochs``, ...)."""
    return Bound(MAX_PASSES, f"each is {what}, so at one second a pass the count sets the "
                             f"training time", duration_text, "time")


def solver_epochs(what: str = "an epoch of coordinate descent over the cached constraints"
                  ) -> Bound:
    """The bound of a count of inner solver epochs (no decoding: each is cheap)."""
    return Bound(MAX_SOLVER_EPOCHS, f"each is {what}, so at a millisecond an epoch the "
                                    f"count sets the training time",
                 lambda v: duration_text(v / 1000), "time")


#: training passes over the data (each decodes every example): 10,000 is 2.8 hours at a
#: second a pass, far past any default (at most 200)
MAX_PASSES = 10_000
#: inner solver epochs (DCD over cached constraints, no decoding; defaults up to 2000)
MAX_SOLVER_EPOCHS = 1_000_000
_THREAD_STACK = 8 << 20  # bytes a thread's stack reserves (Linux default)
_PROCESS = 100 << 20  # bytes a worker process takes at least (Python, numpy, the task)

N_JOBS = Bound(
    1024, "every worker is a thread with its own 8 MiB stack or a process of at least "
          "100 MiB with its own copy of the model and the data",
    lambda v: f"{size_text(abs(v) * _THREAD_STACK)} as threads, "
              f"{size_text(abs(v) * _PROCESS)} as processes", "memory")
# A k-best list of a sentence of n words holds k trees of n heads (8 bytes each) and their
# derivation entries in memory, and about 40 characters per word and tree in the file.
_KBEST_WORDS = 25
KBEST_K = Bound(
    1000, "the parser holds the k trees of a sentence in memory (about 24 bytes per word "
          "and tree) and writes them all (about 40 characters per word and tree)",
    lambda v: f"{size_text(v * _KBEST_WORDS * 24)} of memory and "
              f"{size_text(v * _KBEST_WORDS * 40)} of file per {_KBEST_WORDS}-word sentence",
    "memory")
FOLDS = Bound(
    100, "jackknifing trains one parser per fold, each on all the other folds",
    lambda v: f"{v:,} trainings", "time", low=2)
TOP = Bound(
    10_000, "it prints that many strongest and weakest features of every label",
    lambda v: f"{2 * v:,} lines per label", "time")
WINDOW = Bound(
    10, "every token gets 2*window+1 context-word attributes of about 50 bytes (three "
        "times as many with POS, as chunk has)",
    lambda v: f"{size_text((2 * v + 1) * 50)} per token", "memory", low=0)
AFFIX_LENGTH = Bound(
    30, "a word gets a prefix and a suffix of every length up to affix_length (about "
        "affix_length² bytes for a long word), and every token loops over those lengths at "
        "about 10 million a second",
    lambda v: f"{size_text(v * v)} per long word and {duration_text(v / 1e7)} per token",
    "memory")
NEGATIVES_PER_POSITIVE = Bound(
    100, "every binary positive sentence (n_binary) is copied, shuffled, that many times "
         "into B-",
    lambda v: f"{v:,} copies of each", "memory", low=0)
NEGATIVE_RATIO = Bound(
    100, "training samples that many language-model sentences per training positive, "
         "about 200 bytes and half a millisecond each",
    lambda v: f"{size_text(v * 1000 * 200)} and {duration_text(v * 1000 / 2000)} per "
              f"1,000 positives", "memory")
NEGATIVE_SETS = Bound(
    100, "evaluation samples and decodes that many negative sets, each as large as the "
         "positive set",
    lambda v: f"{v:,} times the positives' decoding", "time", low=0)
N_COMPONENTS = Bound(
    4096, "the transition weights W_T hold n_components² floats (and the emission "
          "weights n_components per input feature)",
    lambda v: f"{size_text(8 * v * v)} for W_T", "memory")
MAX_WEIGHTS = Bound(
    2 ** 31, "it allows n_components × n_attributes emission weights of 8 bytes each",
    lambda v: size_text(8 * v), "memory")


def _pow2_bytes(bits: int, per: str = "") -> str:
    """The size of 2**bits float64 weights (``bits`` may be huge: never computed exactly)."""
    text = size_text(8 * 2 ** bits) if bits <= 80 else f"2**{bits + 3:,} bytes"
    return text + per


DEP_HASH_BITS = Bound(
    30, "the parser holds 2**hash_bits arc weights of 8 bytes each", _pow2_bytes, "memory",
    low=4)
LABEL_HASH_BITS = Bound(
    26, "the parser holds 2**label_hash_bits rows of one 8-byte weight per dependency label",
    lambda v: _pow2_bytes(v, " per label"), "memory")
RERANK_HASH_BITS = Bound(
    30, "the reranker holds 2**hash_bits feature weights of 8 bytes each", _pow2_bytes,
    "memory", low=2)
N_HIDDEN = Bound(
    1000, "every word takes n_hidden hidden values per class, and belief propagation holds "
          "an n_hidden × n_hidden table of 8-byte floats per tree edge",
    lambda v: f"{size_text(8 * v * v)} per edge", "memory")
MAX_SUPERSENSES = Bound(
    100, "every word takes up to max_supersenses × n_hidden hidden values",
    lambda v: f"{v:,} supersenses per word", "memory")
CHUNKER_EPOCHS = passes("an epoch of the chunker's perceptron over chunker_sentences")
MAX_NEGATIVE_UPDATES = Bound(
    MAX_PASSES, "each is a decode of the negative example within one visit",
    lambda v: f"{v:,} decodes per negative and visit", "time")


#: Largest magnitude of a real-valued sequence attribute (a feature dict's ``{"shop": 0.5}``,
#: a CRFsuite data file's ``attr:2.5``).  The value multiplies its weights in every score
#: and gradient, so one value of 1e12 swamps every other feature and overflows exp() in
#: the CRF's sums; features meant as real values (counts, scaled measurements, embeddings)
#: are far below 1e6.  A NaN or infinite value is refused as well (it would poison every
#: score); scale or bin larger values.
MAX_ATTRIBUTE_VALUE = 1e6


def check_bounded(name: str, value, bound: Bound, *, default=None) -> int:
    """``value`` as an int after checking it is an integer in ``[bound.low, bound.high]``;
    ``ConfigError`` otherwise, naming ``name`` (a parameter or a flag such as ``-k``) and,
    for a value over the limit, what it would cost."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ConfigError(f"{name} must be an integer in [{bound.low}, {bound.high}], got "
                          f"{value!r}")
    if value < bound.low:
        raise ConfigError(f"{name} must be an integer in [{bound.low}, {bound.high}], got "
                          f"{value}")
    if value > bound.high:
        raise ConfigError(f"{name} must be an integer in [{bound.low}, {bound.high}], got "
                          f"{value:,}: {bound.why(name, value, default)}")
    return int(value)


#: every bounded option by name, with where it applies (for the README and the tests)
BOUNDS: dict[str, tuple[Bound, str]] = {
    "n_jobs / --n-jobs": (N_JOBS, "every learner with parallel inference; train, evaluate, "
                                  "predict, kbest, explain, demo"),
    "-k": (KBEST_K, "kbest (and the k-best file reader's header k)"),
    "--folds": (FOLDS, "kbest"),
    "--top": (TOP, "inspect"),
    "max_iter, n_epochs, n_iter, weight_epochs, label_epochs, n_restarts, "
    "max_cutting_plane_rounds, init_max_iter": (passes(), "learners"),
    "dcd_max_iter, inner_max_iter, inner_sweeps, max_iter of two-stage":
        (solver_epochs(), "learners"),
    "max_negative_updates": (MAX_NEGATIVE_UPDATES, "latent-pa"),
    "n_components": (N_COMPONENTS, "distro"),
    "max_weights": (MAX_WEIGHTS, "distro"),
    "window": (WINDOW, "chunk, pos, citations"),
    "affix_length": (AFFIX_LENGTH, "chunk, pos, citations"),
    "negatives_per_positive": (NEGATIVES_PER_POSITIVE, "chunk, pos, citations (J-LIS)"),
    "negative_ratio": (NEGATIVE_RATIO, "grammaticality"),
    "n_negative_sets": (NEGATIVE_SETS, "grammaticality (evaluation time)"),
    "chunker_epochs": (CHUNKER_EPOCHS, "grammaticality"),
    "hash_bits (dep), label_hash_bits": (DEP_HASH_BITS, "dep (label_hash_bits: at most "
                                                         f"{LABEL_HASH_BITS.high})"),
    "hash_bits (rerank)": (RERANK_HASH_BITS, "rerank"),
    "n_hidden": (N_HIDDEN, "rerank"),
    "max_supersenses": (MAX_SUPERSENSES, "rerank"),
}
