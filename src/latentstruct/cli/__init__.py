"""The ``latentstruct`` command line: train, evaluate, predict, explain, inspect, demo, info.

Exit codes: 0 success, 2 usage or input errors (malformed files, unknown task or option,
bad hyperparameters, incompatible model files), 1 anything unexpected.
Outputs (model files, predictions) are written atomically: a failed run never leaves a
half-written file behind.
"""

from __future__ import annotations

import argparse
import sys

from .. import __version__
from ..exceptions import ConfigError, InputError, LatentStructError, ModelFormatError
from .common import parse_option
from .compute import add_compute_args
from .help import TrainHelp, describe_options

__all__ = ["main", "parse_option", "build_parser", "describe_options"]


def _lazy(module: str, name: str):
    """The command function ``name`` of ``latentstruct.cli.<module>``, imported on call: the
    heavy imports (numpy, scikit-learn, numba) happen only when a command runs, so ``--help``
    stays fast."""

    def run(args):
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{module}"), name)(args)

    return run


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="latentstruct",
        description="Discriminative learning over constrained latent structures.",
    )
    p.add_argument("--version", action="version", version=f"latentstruct {__version__}")
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
                                   "into memory, as is <(...) process substitution)")
    t.add_argument("--model", required=True, help="output model file (.npz)")
    t.add_argument("--learner", help="learner name (default: the task's)")
    t.add_argument("--option", action="append", metavar="KEY=VALUE",
                   help="task or learner parameter, routed by name (repeatable)")
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
                        "result equals an uninterrupted run)")
    t.add_argument("--quiet", action="store_true", help="no progress bar, summary or warnings")
    add_compute_args(t)
    t.set_defaults(func=_lazy("train", "cmd_train"))

    e = sub.add_parser("evaluate", help="print metrics of a model on labelled data, with "
                                        "counts and per-type scores")
    e.add_argument("--model", required=True)
    e.add_argument("--test", help="labelled data file, or - for standard input (optional for "
                                  "tasks with shipped data)")
    e.add_argument("--option", action="append", metavar="KEY=VALUE")
    e.add_argument("--format", choices=("json", "table"), default="json",
                   help="json: one JSON object (default); table: aligned text like conlleval")
    e.add_argument("--quiet", action="store_true", help="no progress bars or warnings")
    add_compute_args(e)
    e.set_defaults(func=_lazy("evaluate", "cmd_evaluate"))

    r = sub.add_parser("predict", help="write the input back with predicted structures")
    r.add_argument("--model", required=True)
    r.add_argument("--input", required=True,
                   help="data to tag, or - for standard input; gold labels may be absent "
                        "(chunk: 'word POS' lines; pos: "
                        "CoNLL-U, or plain text with one sentence per line; citations: plain "
                        "references, one per line)")
    r.add_argument("--output", required=True, help="output file, or - for standard output")
    r.add_argument("--option", action="append", metavar="KEY=VALUE")
    r.add_argument("--quiet", action="store_true", help="no progress bars or warnings")
    add_compute_args(r)
    r.set_defaults(func=_lazy("evaluate", "cmd_predict"))

    x = sub.add_parser("explain", help="draw the latent structure a model picks for one input, "
                                       "or a DISTRO model's label similarities")
    x.add_argument("--model", required=True)
    x.add_argument("--source", help="first input (e.g. an English name); not for distro models")
    x.add_argument("--target", help="second input (e.g. its transliteration); not for distro models")
    x.add_argument("--out", required=True, help="output picture (.png)")
    x.add_argument("--option", action="append", metavar="KEY=VALUE")
    x.set_defaults(func=_lazy("explain", "cmd_explain"))

    k = sub.add_parser("kbest", help="write each sentence's k best parses (for reranking)",
                       description="Write the k best trees of every sentence under a 'dep' "
                                   "model as a k-best file (JSON lines; see README). With "
                                   "--folds N, INPUT must be the model's training data: each "
                                   "fold is parsed by a parser trained on the other folds.")
    k.add_argument("--model", required=True, help="a 'dep' model file")
    k.add_argument("--input", required=True, help="CoNLL-U file, .dp file or .dp directory, or "
                                                  "- for standard input")
    k.add_argument("--output", required=True, help="output k-best file")
    k.add_argument("-k", type=int, default=16, help="trees per sentence (default 16)")
    k.add_argument("--folds", type=int, default=None,
                   help="jackknife: parse the model's training data in N folds")
    k.add_argument("--option", action="append", metavar="KEY=VALUE",
                   help="evaluation-time task option, e.g. ptb_split=heldout (repeatable)")
    k.add_argument("--quiet", action="store_true")
    k.set_defaults(func=_lazy("kbest", "cmd_kbest"))

    d = sub.add_parser("demo", help="transliteration discovery on CLDR names: two-stage vs LCLR")
    d.add_argument("--lang", default="he", help="he, ru or ar (default he)")
    d.add_argument("--out", default=".", help="folder for the alignment picture")
    d.add_argument("--n-jobs", type=int, default=1, dest="n_jobs")
    d.add_argument("--quiet", action="store_true")
    d.set_defaults(func=_lazy("info", "cmd_demo"))

    n = sub.add_parser("inspect", help="list a model's strongest features per label, its label "
                                       "transitions and bias")
    n.add_argument("--model", required=True)
    n.add_argument("--top", type=int, default=20, help="features per label (default 20)")
    n.add_argument("--format", choices=("table", "json"), default="table",
                   help="table: aligned text (default); json: one JSON object")
    n.set_defaults(func=_lazy("inspect", "cmd_inspect"))

    i = sub.add_parser("info", help="print a model file's metadata")
    i.add_argument("--model", required=True)
    i.add_argument("--as-config", action="store_true", dest="as_config",
                   help="print the run configuration that retrains the model (JSON, for "
                        "train --config)")
    i.set_defaults(func=_lazy("info", "cmd_info"))

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


def _error(exc, code: int) -> int:
    print(f"latentstruct: error: {_one_line(exc)}", file=sys.stderr)
    return code


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    import warnings

    with warnings.catch_warnings():
        warnings.showwarning = _show_warning
        quiet = getattr(args, "quiet", False)
        if quiet:
            warnings.simplefilter("ignore")
        from ..data.progress import show_progress

        try:
            with show_progress(not quiet):  # bars on stderr for phases over 2 s
                return args.func(args)
        except (InputError, ConfigError, ModelFormatError) as exc:
            return _error(exc, 2)
        except LatentStructError as exc:
            return _error(exc, 1)
        except BrokenPipeError:
            # the reader went away (`latentstruct inspect ... | head`): stop quietly, as
            # command-line tools do, and keep Python from complaining at exit
            import os

            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 141  # 128 + SIGPIPE, what a shell reports for a tool killed by it
        except OSError as exc:
            # a full disk, a permission denied, a read-only file system: the user's to fix
            where = f"{exc.filename}: " if exc.filename else ""
            return _error(f"{where}{exc.strerror or exc}", 2)
        except KeyboardInterrupt:
            print("latentstruct: interrupted", file=sys.stderr)
            return 130
