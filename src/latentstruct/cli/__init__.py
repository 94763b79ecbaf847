"""The ``latentstruct`` command line: train, evaluate, predict, explain, inspect, demo, info.

Exit codes: 0 success, 2 usage or input errors (malformed files, unknown task or option,
bad hyperparameters, incompatible model files), 1 anything unexpected, 130 interrupted
(Ctrl-C), 141 a closed standard output.  Every error is one line ``latentstruct: error:
...`` on standard error, argparse's usage errors included (``--help`` prints the usage).
Outputs (model files, predictions) are written atomically: a failed run never leaves a
half-written file behind.
"""

from __future__ import annotations

import sys

try:  # Ctrl-C while the command line's own modules load: the same one line and status
    import argparse

    from ..version import __version__
    from ..exceptions import ConfigError, InputError, LatentStructError, ModelFormatError
    from .common import parse_option
    from .compute import add_compute_args
    from .help import TrainHelp, describe_options
except KeyboardInterrupt:
    sys.stderr.write("latentstruct: interrupted\n")
    raise SystemExit(130) from None

__all__ = ["main", "parse_option", "build_parser", "describe_options"]


def _lazy(module: str, name: str):
    """The command function ``name`` of ``latentstruct.cli.<module>``, imported on call: the
    heavy imports (numpy, scikit-learn, numba) happen only when a command runs, so ``--help``
    stays fast."""

    def run(args):
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{module}"), name)(args)

    return run


class _Parser(argparse.ArgumentParser):
    """argparse with a usage error as ONE line ``latentstruct: error: ...`` (exit 2), like
    every other error of the command line, instead of the usage block; ``--help`` still
    prints the full usage.  Subcommand parsers are of this class too."""

    def error(self, message):
        self.exit(2, f"latentstruct: error: {_one_line(message)} (see '{self.prog} --help')\n")


def _add_verbosity(parser, quiet_help: str) -> None:
    """``--quiet`` and ``--progress`` (one or the other): bars go to standard error only
    when it is a terminal, unless ``--progress`` forces them (into a log, a pipe)."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--quiet", action="store_true", help=quiet_help)
    group.add_argument("--progress", action="store_true",
                       help="draw progress bars even when standard error is not a terminal "
                            "(by default they appear only on a terminal)")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="latentstruct",
        description="Discriminative learning over constrained latent structures.",
    )
    p.add_argument("-V", "--version", action="version", version=f"latentstruct {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    t = sub.add_parser("train", help="train a model on a task", add_help=False,
                       description="Train a model. 'latentstruct train TASK [--learner NAME] "
                                   "--help' lists the task's and the learner's options.")
    t.add_argument("-h", "--help", action=TrainHelp,
                   help="show this help and the options of TASK (and --learner) if given")
    t.add_argument("task", nargs="?", help="task name (chunk, pos, dep, rerank, citations, "
                                           "translit, paraphrase, rte, grammaticality, doccls); "
                                           "optional with --config")
    t.add_argument("--train", help="training data file, or - for standard input (read once "
                                   "into memory, as is <(...) process substitution); pos and "
                                   "chunk also read spaCy's .spacy files (python -m spacy "
                                   "convert)")
    t.add_argument("--model", required=True, help="output model file (.npz)")
    t.add_argument("--learner", help="learner name (default: the task's)")
    t.add_argument("--option", action="append", metavar="KEY=VALUE",
                   help="task or learner parameter, routed by name (repeatable)")
    t.add_argument("--classes", metavar="LABELS",
                   help="the full label set of an online learner's stream, comma-separated "
                        "(e.g. B-NP,I-NP,O; a JSON list for labels holding commas), declared "
                        "on its first training so that later --resume runs may bring labels "
                        "this data lacks; checked with the task's label rules (chunk, "
                        "citations, doccls, pos, sequence)")
    t.add_argument("--seed", type=int, default=None,
                   help="seed of the learner's random_state and the task's sampling (default: "
                        "their defaults, 0; always recorded in the model)")
    t.add_argument("--config", metavar="FILE",
                   help="run configuration (.toml or .json; or a model .npz to replay its run); "
                        "command-line values win")
    t.add_argument("--checkpoint", metavar="PATH",
                   help="write the training state to PATH after every outer iteration/epoch")
    t.add_argument("--resume", metavar="PATH",
                   help="continue from a --checkpoint file (same data and options; the "
                        "result equals an uninterrupted run), or from a model file of an "
                        "online learner (perceptron, latent-pa, sgd-ssvm, pa, arow, crf "
                        "with solver=sgd): one partial_fit pass over the --train data, or N "
                        "with --option max_iter=N (n_epochs=N for sgd-ssvm)")
    _add_verbosity(t, "no progress bar, summary or warnings")
    add_compute_args(t)
    t.set_defaults(func=_lazy("train", "cmd_train"))

    e = sub.add_parser("evaluate", help="print metrics of a model on labelled data, with "
                                        "counts and per-type scores")
    e.add_argument("--model", required=True,
                   help="a model file: latentstruct's (.npz), or a CRFsuite model "
                        "file (python-crfsuite, sklearn-crfsuite, crfsuite learn), "
                        "read as a 'sequence' model")
    e.add_argument("--test", help="labelled data file, or - for standard input (optional for "
                                  "tasks with shipped data)")
    e.add_argument("--option", action="append", metavar="KEY=VALUE")
    e.add_argument("--format", choices=("json", "table"), default="json",
                   help="json: one JSON object (default); table: aligned text like conlleval")
    _add_verbosity(e, "no progress bars or warnings")
    add_compute_args(e)
    e.set_defaults(func=_lazy("evaluate", "cmd_evaluate"))

    r = sub.add_parser("predict", help="write the input back with predicted structures")
    r.add_argument("--model", required=True,
                   help="a model file: latentstruct's (.npz), or a CRFsuite model "
                        "file (python-crfsuite, sklearn-crfsuite, crfsuite learn), "
                        "read as a 'sequence' model")
    r.add_argument("--input", required=True,
                   help="data to tag, or - for standard input; gold labels may be absent "
                        "(chunk: 'word POS' lines or a .spacy file; pos: "
                        "CoNLL-U, a .spacy file (written back as CoNLL-U), or plain text with "
                        "one sentence per line; citations: plain "
                        "references, one per line; sequence: CRFsuite's data format, "
                        "LABEL<TAB>ATTRIBUTE<TAB>... with the label field present, as for "
                        "crfsuite tag, or empty)")
    r.add_argument("--output", required=True, help="output file, or - for standard output")
    r.add_argument("--option", action="append", metavar="KEY=VALUE")
    _add_verbosity(r, "no progress bars or warnings")
    add_compute_args(r)
    r.set_defaults(func=_lazy("evaluate", "cmd_predict"))

    x = sub.add_parser("explain", help="why a sequence model tags a sentence as it does; the "
                                       "latent structure a model picks for one input; or a "
                                       "DISTRO model's label similarities",
                       description="Sequence models (pos, chunk, sequence, citations): each "
                                   "sentence of --input with its predicted tags, every part's "
                                   "share of the score, the margin to the runner-up and (a "
                                   "CRF) the probabilities; --weights: what the model learned. "
                                   "Text, or HTML when --out ends in .html. Pair models: a "
                                   "picture of the latent structure of --source and --target. "
                                   "DISTRO models: a picture of the label matrix.")
    x.add_argument("--model", required=True)
    x.add_argument("--input", help="sequence models: sentences to explain, in the model's input "
                                   "format (- for standard input)")
    x.add_argument("--sentence", type=int, default=None, metavar="N",
                   help="sequence models: explain only sentence N of --input (0-based)")
    x.add_argument("--weights", action="store_true",
                   help="sequence models: the largest weights per label and the transitions")
    x.add_argument("--top", type=int, default=10, help="with --weights: features per label "
                                                       "and sign (default 10)")
    x.add_argument("--source", help="first input (e.g. an English name); pair models")
    x.add_argument("--target", help="second input (e.g. its transliteration); pair models")
    x.add_argument("--out", help="pair and distro models: the picture, a .png (required); "
                                 "sequence models: a .html or .txt file (default: text on "
                                 "standard output)")
    x.add_argument("--option", action="append", metavar="KEY=VALUE")
    x.set_defaults(func=_lazy("explain", "cmd_explain"))

    k = sub.add_parser("kbest", help="write each sentence's k best parses or tag sequences",
                       description="Write the k best trees of every sentence under a 'dep' "
                                   "model as a k-best file (JSON lines; see README). With "
                                   "--folds N, INPUT must be the model's training data: each "
                                   "fold is parsed by a parser trained on the other folds. "
                                   "Under a sequence model (pos, chunk, sequence, ...): the k "
                                   "best tag sequences of every sentence as JSON lines "
                                   "{\"sentence\": i, \"nbest\": [{\"tags\": [...], "
                                   "\"score\": s, \"probability\": p}]} (p: a CRF's, else "
                                   "null).")
    k.add_argument("--model", required=True, help="a 'dep' model file, or a sequence model's")
    k.add_argument("--input", required=True, help="the model's input format (CoNLL-U, .dp, "
                                                  "CoNLL-2000, ...), or - for standard input")
    k.add_argument("--output", required=True, help="output k-best file")
    k.add_argument("-k", type=int, default=16, help="trees (tag sequences) per sentence "
                                                    "(default 16)")
    k.add_argument("--folds", type=int, default=None,
                   help="jackknife: parse the model's training data in N folds")
    k.add_argument("--n-jobs", type=int, default=None, dest="n_jobs", metavar="W",
                   help="with --folds: train the fold parsers in W worker processes (default: "
                        "one per fold, up to the usable cores; -1: all cores; 1: one after "
                        "the other); ignored without --folds")
    k.add_argument("--option", action="append", metavar="KEY=VALUE",
                   help="evaluation-time task option, e.g. ptb_split=heldout (repeatable)")
    _add_verbosity(k, "no progress bar or summary")
    k.set_defaults(func=_lazy("kbest", "cmd_kbest"))

    d = sub.add_parser("demo", help="transliteration discovery on CLDR names: two-stage vs LCLR")
    d.add_argument("--lang", default="he", help="he, ru or ar (default he)")
    d.add_argument("--out", default=".", help="folder for the alignment picture")
    d.add_argument("--n-jobs", type=int, default=1, dest="n_jobs")
    _add_verbosity(d, "no progress bars or summary")
    d.set_defaults(func=_lazy("info", "cmd_demo"))

    n = sub.add_parser("inspect", help="list a model's strongest features per label, its label "
                                       "transitions and bias")
    n.add_argument("--model", required=True,
                   help="a model file: latentstruct's (.npz), or a CRFsuite model "
                        "file (python-crfsuite, sklearn-crfsuite, crfsuite learn), "
                        "read as a 'sequence' model")
    n.add_argument("--top", type=int, default=20, help="features per label (default 20)")
    n.add_argument("--format", choices=("table", "json"), default="table",
                   help="table: aligned text (default); json: one JSON object")
    n.set_defaults(func=_lazy("inspect", "cmd_inspect"))

    i = sub.add_parser("info", help="print a model file's metadata")
    i.add_argument("--model", required=True,
                   help="a model file: latentstruct's (.npz), or a CRFsuite model "
                        "file (python-crfsuite, sklearn-crfsuite, crfsuite learn), "
                        "read as a 'sequence' model")
    i.add_argument("--as-config", action="store_true", dest="as_config",
                   help="print the run configuration that retrains the model (JSON, for "
                        "train --config)")
    i.set_defaults(func=_lazy("info", "cmd_info"))

    g = sub.add_parser("data", help="list the corpora, or download one into the data home",
                       description="The corpora the guides and examples read. They live in "
                                   "the data home: $LATENTSTRUCT_DATA, else ../shared/data "
                                   "if it exists, else ~/latentstruct_data.")
    data_sub = g.add_subparsers(dest="data_command", required=True, metavar="ACTION")
    gl = data_sub.add_parser("list", help="every corpus: size, licence, and whether it is in "
                                          "the data home")
    gl.add_argument("--data-home", dest="data_home", help="the data home (default as above)")
    gl.add_argument("--format", choices=("table", "json"), default="table",
                    help="table: aligned text (default); json: one JSON object per line")
    gl.set_defaults(func=_lazy("data", "cmd_data_list"))
    gf = data_sub.add_parser("fetch", help="download corpora (checked by SHA-256, written "
                                           "atomically, never twice)")
    gf.add_argument("names", nargs="+", metavar="NAME",
                    help="corpus names from `latentstruct data list` (UD treebanks also by "
                         "code: en_ewt, eu_bdt), or 'all' for every downloadable corpus")
    gf.add_argument("--data-home", dest="data_home", help="the data home (default as above)")
    gf.add_argument("--mirror", help="base URL of a copy laid out as the data home "
                                     "(<mirror>/<corpus>/<file>; default "
                                     "$LATENTSTRUCT_DATA_MIRROR, else the original sources)")
    _add_verbosity(gf, "print nothing but errors")
    gf.set_defaults(func=_lazy("data", "cmd_data_fetch"))
    gp = data_sub.add_parser("path", help="print the path of a corpus's file, fetching the "
                                          "corpus if it is missing (for --train \"$(...)\")")
    gp.add_argument("name", metavar="NAME", help="a corpus name (or UD code)")
    gp.add_argument("key", nargs="?", metavar="KEY",
                    help="which file: train, dev, ... (default: the corpus's folder)")
    gp.add_argument("--data-home", dest="data_home", help="the data home (default as above)")
    gp.add_argument("--mirror", help="as for fetch")
    gp.set_defaults(func=_lazy("data", "cmd_data_path"))

    o = sub.add_parser("options", help="list the options of a task and a learner",
                       description="List every option of TASK and of its learner (default: "
                                   "the task's) with its default and meaning; with no TASK, "
                                   "list the tasks and learners.")
    o.add_argument("task", nargs="?", help="task name")
    o.add_argument("--learner", help="learner name (default: the task's)")
    o.set_defaults(func=_lazy("info", "cmd_options"))
    return p


_MAX_MESSAGE = 1000  # characters of an error or warning printed (a bad input can be huge)


def _one_line(text) -> str:
    """A message as one line of bounded length."""
    text = " ".join(str(text).split())
    if len(text) > _MAX_MESSAGE:
        text = f"{text[:_MAX_MESSAGE]}… ({len(text) - _MAX_MESSAGE} more characters)"
    return text


def _show_warning(message, category, filename, lineno, file=None, line=None):
    # one clean line: no source file, line number or source line of library internals
    print(f"latentstruct: warning: {_one_line(message)} ({category.__name__})",
          file=sys.stderr if file is None else file)


def _close_bars() -> None:
    """Close the progress bars still open (a loop left by an exception): a bar closed later
    would clear the terminal line that holds the error or the interruption."""
    std = sys.modules.get("tqdm.std")
    for bar in list(getattr(getattr(std, "tqdm", None), "_instances", ()) or ()):
        try:
            bar.close()
        except Exception:  # noqa: BLE001 - a bar that cannot close must not hide the error
            pass


#: seconds between raising an interruption again while the command has not ended
RETRY_INTERRUPT_S = 1.0


class _Interrupts:
    """Ctrl-C (SIGINT) during a command: it raises KeyboardInterrupt as Python's own
    handler does, and is remembered, so that an error it causes on the way out (a worker
    process killed by the same Ctrl-C, a half-read pipe) is reported as the interruption.
    A SIGINT that was ignored when the program started (a background job) stays ignored.

    A KeyboardInterrupt raised while C code is calling back into Python is printed as
    "Exception ignored" and lost: numba compiling a kernel on a fresh install (llvmlite's
    object-cache callback) swallowed one, and training went on for good
    (tests/test_hostile_inputs.py).  So once a Ctrl-C is seen, it is raised again every
    ``RETRY_INTERRUPT_S`` until the command has ended."""

    def __init__(self):
        self.seen = False
        self.ended = False
        self.previous = None
        self._retry = None
        self._previous_hook = None

    def _handler(self, signum, frame):
        self.seen = True
        self._arm_retry()
        raise KeyboardInterrupt

    def _unraisable(self, unraisable) -> None:
        """``sys.unraisablehook`` during a command: our own KeyboardInterrupt, lost in a
        callback, is raised again (above) and reported in one line, not as a traceback."""
        if self.seen and issubclass(unraisable.exc_type, KeyboardInterrupt):
            return
        (self._previous_hook or sys.__unraisablehook__)(unraisable)

    def _arm_retry(self) -> None:
        import threading

        if self._retry is None and not self.ended:
            self._retry = threading.Timer(RETRY_INTERRUPT_S, self._raise_again)
            self._retry.daemon = True
            self._retry.start()

    def _raise_again(self) -> None:
        import _thread

        self._retry = None
        if self.seen and not self.ended:
            # as a SIGINT would: the handler runs in the main thread (and arms the next
            # retry); nothing happens once the handler is SIG_IGN or restored
            _thread.interrupt_main()

    def _end(self) -> None:
        self.ended = True
        retry, self._retry = self._retry, None
        if retry is not None:
            retry.cancel()

    def start(self) -> None:
        """Catch SIGINT from now on (where Python's own handler would)."""
        import signal
        import threading

        self.seen = False
        self.ended = False
        if threading.current_thread() is threading.main_thread() and \
                signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            self.previous = signal.signal(signal.SIGINT, self._handler)
            self._previous_hook, sys.unraisablehook = sys.unraisablehook, self._unraisable

    def exit(self, program: bool) -> int:
        """Report the interruption: one line, status 130.  In the program (not a call from
        Python), a second Ctrl-C while it exits changes nothing."""
        import signal
        import threading

        self._end()
        if program and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        _close_bars()
        try:
            print("latentstruct: interrupted", file=sys.stderr, flush=True)
        except (OSError, ValueError):  # standard error closed: the status still says it
            pass
        return 130

    def restore(self) -> None:
        import signal

        if self.previous is not None and signal.getsignal(signal.SIGINT) == self._handler:
            signal.signal(signal.SIGINT, self.previous)
        self.previous = None
        if self._previous_hook is not None and sys.unraisablehook == self._unraisable:
            sys.unraisablehook = self._previous_hook
        self._previous_hook = None


_INTERRUPTS = _Interrupts()


def _error(exc, code: int) -> int:
    if _INTERRUPTS.seen:  # an error on the way out of a Ctrl-C: report the Ctrl-C
        return _INTERRUPTS.exit(False)
    _close_bars()
    print(f"latentstruct: error: {_one_line(exc)}", file=sys.stderr)
    return code


def main(argv=None) -> int:
    """Run the command line on ``argv`` (default: ``sys.argv[1:]``, the program itself);
    returns the exit status.  argparse's usage errors and ``--help`` raise SystemExit."""
    program = argv is None
    _INTERRUPTS.start()
    try:
        return _run(argv)
    except KeyboardInterrupt:
        return _INTERRUPTS.exit(program)
    except Exception:
        if _INTERRUPTS.seen:
            return _INTERRUPTS.exit(program)
        raise
    finally:
        _INTERRUPTS._end()  # no interruption is raised again once the command is over
        if not program:  # a caller in Python gets its own SIGINT handling back
            _INTERRUPTS.restore()


def _reader_gone() -> int:
    """The reader of standard output went away (``latentstruct train --help | head``): stop
    quietly, as command-line tools do, and keep Python from complaining at exit."""
    import os

    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 141  # 128 + SIGPIPE, what a shell reports for a tool killed by it


def _run(argv) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)  # --help prints here
    except BrokenPipeError:
        return _reader_gone()
    import warnings

    with warnings.catch_warnings():
        warnings.showwarning = _show_warning
        quiet = getattr(args, "quiet", False)
        if quiet:
            warnings.simplefilter("ignore")
        from ..data.progress import show_progress

        # bars: forced by --progress, none under --quiet, else only on a terminal
        bars = True if getattr(args, "progress", False) else (False if quiet else None)
        try:
            with show_progress(bars):  # bars on stderr for phases over 2 s
                return args.func(args)
        except (InputError, ConfigError, ModelFormatError) as exc:
            return _error(exc, 2)
        except LatentStructError as exc:
            return _error(exc, 1)
        except BrokenPipeError:  # `latentstruct inspect ... | head`
            return _reader_gone()
        except OSError as exc:
            # a full disk, a permission denied, a read-only file system: the user's to fix
            where = f"{exc.filename}: " if exc.filename else ""
            return _error(f"{where}{exc.strerror or exc}", 2)
