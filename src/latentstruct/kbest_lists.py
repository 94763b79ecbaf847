"""k-best dependency lists for reranking: from a trained parser, and jackknifed.

``latentstruct kbest --model dep.model --input FILE --output FILE.kbest`` writes each
sentence's k best trees under the model (format: :mod:`latentstruct.data.kbest`).  With
``--folds N`` the input must be the model's own training data: it is cut into N contiguous
folds and each fold is parsed by a parser trained, with the model's options, on the other
N − 1 folds, so the lists a reranker trains on look like the lists it will meet on new text
(a parser's k-best lists on its own training sentences are far too good).

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
from pathlib import Path

import numpy as np

from .data.dependency import punctuation_mask
from .data.kbest import KBestCandidate, KBestHeader, KBestSentence, write_kbest
from .data.path_rule import open_input
from .exceptions import ConfigError

__all__ = ["data_digest", "parser_id", "kbest_sentences", "jackknife_kbest", "write_model_kbest"]


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
    from .tasks.base import Dataset

    X = task.featurize(Dataset(list(records), [None] * len(records)))
    out = []
    for i, rec in enumerate(records):
        cands = [KBestCandidate(tuple(int(h) for h in heads), tuple(deprels), float(score))
                 for heads, deprels, score in task.kbest(X[i], coef, k)]
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

    from .data.progress import bar_disable

    dataset = task.read(input_path, split="test")
    with tqdm(total=len(dataset), disable=bar_disable(verbose), desc="k-best", unit="sent") as bar:
        sents = kbest_sentences(task, learner.coef_, dataset.records, k, progress=bar.update)
    write_kbest(output_path, _header(task, metadata, k, 1, input_path), sents)
    return len(sents)


def jackknife_kbest(task, learner, metadata, input_path, output_path, k: int, folds: int, *,
                    verbose: bool = False) -> int:
    """Write jackknifed k-best lists of the model's training data (see the module docstring)."""
    from .learners import get_learner_class
    from .pipelines import attach_tagger
    from .tasks import get_task_class
    from .tasks.base import Dataset

    if not isinstance(folds, int) or folds < 2:
        raise ConfigError(f"--folds must be an integer >= 2, got {folds!r}")
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
    sents: list[KBestSentence] = []
    # the model file is data: its parameters pass through params_from_file (paths it names
    # are not used), and a tagger comes from the loaded model, never from a path it records
    fold_params = task_cls.params_from_file(metadata["task_params"])
    tagger = ((task.tagger_, task.tagger_coef_)
              if getattr(task, "tagger_", None) is not None else None)
    for f in range(folds):
        t0 = time.perf_counter()
        lo, hi = int(bounds[f]), int(bounds[f + 1])
        train_idx = [i for i in range(n) if not lo <= i < hi]
        fold_task = task_cls(**fold_params)
        if tagger is None:
            tagger = attach_tagger(fold_task, verbose=verbose)
        elif hasattr(fold_task, "set_tagger"):
            fold_task.set_tagger(*tagger)
        part = Dataset([dataset.records[i] for i in train_idx],
                       [dataset.targets[i] for i in train_idx], dataset.path)
        fold_task.fit(part)
        fold_learner = learner_cls(task=fold_task, **learner_params)
        if "progress" in fold_learner.get_params():
            fold_learner.set_params(progress=False)
        fold_learner.fit(fold_task.featurize(part), fold_task.encode_targets(part.targets))
        sents += kbest_sentences(fold_task, fold_learner.coef_, dataset.records[lo:hi], k,
                                 ids=range(lo + 1, hi + 1))
        if verbose:
            print(f"fold {f + 1}/{folds}: trained on {len(train_idx)} sentences, listed "
                  f"{hi - lo} in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
    write_kbest(output_path, _header(task, metadata, k, folds, input_path), sents)
    return len(sents)
