"""k-best dependency lists for reranking: from a trained parser, and jackknifed.

``latentstruct kbest --model dep.model --input FILE --output FILE.kbest`` writes each
sentence's k best trees under the model (format: :mod:`latentstruct.data.dependency.kbest`).  With
``--folds N`` the input must be the model's own training data: it is cut into N contiguous
folds and each fold is parsed by a parser trained, with the model's options, on the other
N − 1 folds, so the lists a reranker trains on look like the lists it will meet on new text
(a parser's k-best lists on its own training sentences are far too good).

The N fold parsers are independent, so they train in parallel: ``--n-jobs W`` loky worker
processes (default: one per fold, up to the usable cores; ``--n-jobs 1`` trains them one
after the other in the command's own process), each fold's learner single-threaded.  The
lists are gathered in fold order, so the file does not depend on the number of workers.

Both kinds of list carry the same ``parser_id``, a digest of the model's task, learner,
options and training data: a reranker trained on the jackknifed lists accepts the lists the
full model writes for new text and refuses lists of another parser.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from ..data.dependency import punctuation_mask
from ..data.dependency.kbest import KBestCandidate, KBestHeader, KBestSentence, write_kbest
from ..data.path_rule import open_input
from ..exceptions import ConfigError

__all__ = ["data_digest", "parser_id", "kbest_sentences", "jackknife_kbest", "write_model_kbest",
           "fold_workers"]


def data_digest(path) -> str:
    """BLAKE2b digest of a data file, or of every file (name and bytes) in a directory.

    Files are read through ``open_input``, so standard input or a pipe that a reader has
    already read gives the digest of the same bytes (a stream is read only once)."""
    path = Path(path)
    h = hashlib.blake2b(digest_size=16)
    files = sorted(p for p in path.iterdir() if p.is_file()) if path.is_dir() else [path]
    for p in files:
        h.update(p.name.encode("utf-8", "surrogatepass") + b"\0" if path.is_dir() else b"")
        with open_input(p) as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    return h.hexdigest()


def parser_id(metadata: dict) -> str:
    """The identity of a parser family: task, learner, their options and training data."""
    extra = metadata.get("extra", {})
    if not isinstance(extra, dict) or "train_digest" not in extra:
        raise ConfigError(
            "this model file records no digest of its training data (it was written by an "
            "older latentstruct); retrain it with `latentstruct train dep` to write k-best lists")
    payload = {k: metadata[k] for k in ("task", "task_params", "learner", "learner_params")}
    payload["train_digest"] = extra["train_digest"]
    text = json.dumps(payload, sort_keys=True, ensure_ascii=True)
    return hashlib.blake2b(text.encode("ascii"), digest_size=12).hexdigest()


def _sentence_id(record, fallback) -> str:
    """The CoNLL-U ``# sent_id`` of a sentence when it has one, else its 1-based number."""
    conllu = getattr(record, "conllu", None)
    for comment in (conllu.comments if conllu is not None else ()):
        key, _, value = comment.lstrip("#").partition("=")
        if key.strip() == "sent_id" and value.strip():
            return value.strip()
    return str(fallback)


def kbest_sentences(task, coef: np.ndarray, records, k: int, *, ids=None,
                    with_gold: bool = True, progress=None) -> list[KBestSentence]:
    """The k best trees of every sentence of ``records`` under ``(task, coef)``."""
    from ..tasks.base import Dataset

    X = task.featurize(Dataset(list(records), [None] * len(records)))
    out = []
    for i, rec in enumerate(records):
        cands = [KBestCandidate(tuple(int(h) for h in heads), tuple(deprels), float(score))
                 for heads, deprels, score in task.structure().kbest(X[i], coef, k)]
        gold = with_gold and all(h >= 0 for h in rec.heads)
        labelled = gold and any(d != "_" for d in rec.deprels)
        out.append(KBestSentence(
            id=_sentence_id(rec, ids[i] if ids is not None else i + 1),
            words=rec.words, lemmas=rec.lemmas, upos=rec.upos, xpos=rec.xpos,
            scored=tuple(bool(s) for s in punctuation_mask(rec)),
            gold_heads=tuple(rec.heads) if gold else None,
            gold_deprels=tuple(rec.deprels) if labelled else None,
            candidates=tuple(cands)))
        if progress is not None:
            progress(1)
    return out


def _header(task, metadata, k, folds, source) -> KBestHeader:
    return KBestHeader(parser_id=parser_id(metadata), k=k,
                       single_root=bool(task.resolved_single_root()),
                       labelled=bool(task.is_labelled()), pos=str(task.pos),
                       source=os.path.basename(os.fspath(source)), folds=folds)


def write_model_kbest(task, learner, metadata, input_path, output_path, k: int, *,
                      verbose: bool = False) -> int:
    """Write the k-best lists of ``input_path`` under a trained model; returns #sentences."""
    from tqdm.auto import tqdm

    from ..data.progress import bar_disable

    dataset = task.read(input_path, split="test")
    with tqdm(total=len(dataset), disable=bar_disable(verbose), desc="k-best", unit="sent") as bar:
        sents = kbest_sentences(task, learner.coef_, dataset.records, k, progress=bar.update)
    write_kbest(output_path, _header(task, metadata, k, 1, input_path), sents)
    return len(sents)


def fold_workers(n_jobs, folds: int) -> int:
    """Worker processes for ``folds`` folds: ``n_jobs`` (``-1``: every usable core; None:
    as many as there are folds and usable cores), never more than ``folds``."""
    from joblib import effective_n_jobs  # joblib's core count heeds affinity and cgroups

    if n_jobs is None or n_jobs == -1:
        wanted = effective_n_jobs(-1)
    elif isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs < 1:
        raise ConfigError(f"n_jobs must be a number of workers >= 1 or -1 (all), got {n_jobs!r}")
    else:
        wanted = n_jobs
    return max(1, min(folds, wanted))


def _fold_kbest(f, bounds, dataset, task_cls, fold_params, tagger, learner_cls,
                learner_params, k, single_threaded=False):
    """Train the parser of fold ``f`` on the other folds and list the fold's sentences.

    Module-level so that a loky worker unpickles it by name.  ``tagger`` is the
    ``(pos_task, coef)`` every fold uses, or None (as ``attach_tagger`` left it);
    ``single_threaded`` runs the fold's learner with ``n_jobs=1`` (a worker among others).
    Returns ``(sentences, #training sentences, seconds)``."""
    from ..tasks.base import Dataset
    from .tagging import POS_TAGGER, uses_helper
    from .training import fit_on_dataset

    t0 = time.perf_counter()
    n = len(dataset)
    lo, hi = int(bounds[f]), int(bounds[f + 1])
    train_idx = [i for i in range(n) if not lo <= i < hi]
    fold_task = task_cls(**fold_params)
    if tagger is not None and uses_helper(fold_task, POS_TAGGER):
        fold_task.set_tagger(*tagger)  # None: the task uses no tagger (see jackknife_kbest)
    part = Dataset([dataset.records[i] for i in train_idx],
                   [dataset.targets[i] for i in train_idx], dataset.path)
    options = dict(learner_params)
    names = learner_cls().get_params(deep=False)
    if "progress" in names:
        options["progress"] = False
    if single_threaded and "n_jobs" in names:
        options["n_jobs"] = 1
    # the one training path's data half (the model's options, already checked when it was
    # trained; the tagger is settled above, once for every fold)
    _, fold_learner = fit_on_dataset(fold_task, part, learner_cls, options)
    sents = kbest_sentences(fold_task, fold_learner.coef_, dataset.records[lo:hi], k,
                            ids=range(lo + 1, hi + 1))
    return sents, len(train_idx), time.perf_counter() - t0


def _fold_kbest_in_worker(f, *args):
    """:func:`_fold_kbest` in a worker process, single-threaded, with the warnings it raised
    recorded and returned as ``(text, category, filename, lineno)`` for the parent to issue
    (a worker has neither the command's warning filters nor its one-line format)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = _fold_kbest(f, *args, single_threaded=True)
    return result, [(str(w.message), w.category, w.filename, w.lineno) for w in caught]


def jackknife_kbest(task, learner, metadata, input_path, output_path, k: int, folds: int, *,
                    n_jobs: int | None = 1, verbose: bool = False) -> int:
    """Write jackknifed k-best lists of the model's training data (see the module docstring);
    returns the number of sentences.

    The ``folds`` parsers train in ``n_jobs`` loky worker processes (``-1``: every usable
    core; None: one per fold, up to the usable cores; never more than ``folds``), each
    learner with ``n_jobs=1`` so the cores are not oversubscribed.  The lists are gathered
    in fold order, so the file is byte-identical to the serial run; with one worker (the
    default) the folds train one after the other in this process, as the model's learner
    options say.  The POS tagger (the model's own, or the one ``attach_tagger`` gives the
    first fold) is settled here, once, and every fold uses it."""
    from ..learners import get_learner_class
    from .tagging import attach_tagger
    from ..tasks import get_task_class
    from ..tasks.contracts import params_from_file

    if not isinstance(folds, int) or folds < 2:
        raise ConfigError(f"--folds must be an integer >= 2, got {folds!r}")
    workers = fold_workers(n_jobs, folds)
    recorded = metadata.get("extra", {}).get("train_digest")
    if recorded != data_digest(input_path):
        raise ConfigError(
            f"--folds parses a model's own training data with parsers trained on the other "
            f"folds, but {input_path} is not the data this model was trained on "
            f"({metadata.get('extra', {}).get('train_path', '?')}); give that file, or drop "
            f"--folds to parse new text with the model itself")
    dataset = task.read(input_path, split="train")
    n = len(dataset)
    if n < folds:
        raise ConfigError(f"{input_path} has {n} sentences, fewer than --folds {folds}")
    task_cls = get_task_class(metadata["task"])
    learner_cls = get_learner_class(metadata["learner"])
    learner_params = {k_: v for k_, v in metadata["learner_params"].items()
                      if not (isinstance(v, str) and v.startswith("<"))}
    bounds = np.linspace(0, n, folds + 1).round().astype(int)
    # the model file is data: its parameters pass through params_from_file (paths it names
    # are not used), and a tagger comes from the loaded model, never from a path it records
    fold_params = params_from_file(task_cls, metadata["task_params"])
    tagger = ((task.tagger_, task.tagger_coef_)
              if getattr(task, "tagger_", None) is not None else None)
    if tagger is None:  # what the first fold's task would attach; later folds reuse it
        tagger = attach_tagger(task_cls(**fold_params), verbose=verbose)
    args = (bounds, dataset, task_cls, fold_params, tagger, learner_cls, learner_params, k)
    registry: dict = {}  # a worker's warning from the same place shows once, as serially
    if workers == 1:
        results = ((_fold_kbest(f, *args), ()) for f in range(folds))
    else:
        from joblib import Parallel, delayed

        from ..parallel import ensure_numba_cache

        ensure_numba_cache()  # settled in os.environ, which the loky workers inherit
        if verbose:
            print(f"training {folds} fold parsers in {workers} worker processes",
                  file=sys.stderr)
        results = Parallel(n_jobs=workers, backend="loky", return_as="generator")(
            delayed(_fold_kbest_in_worker)(f, *args) for f in range(folds))
    sents: list[KBestSentence] = []
    for f, ((fold_sents, n_train, seconds), caught) in enumerate(results):  # in fold order
        for text, category, filename, lineno in caught:
            warnings.warn_explicit(text, category, filename, lineno, registry=registry)
        sents += fold_sents
        if verbose:
            print(f"fold {f + 1}/{folds}: trained on {n_train} sentences, listed "
                  f"{len(fold_sents)} in {seconds:.1f}s", file=sys.stderr)
    write_kbest(output_path, _header(task, metadata, k, folds, input_path), sents)
    return len(sents)
