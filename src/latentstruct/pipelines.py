"""Ready-made training recipes that combine a task with a learner (above the learner layer).

:func:`train_pos_tagger` is the project's own UPOS tagger (``PosTask`` + ``StructuredSVM``),
used wherever POS tags are needed and none are given: the ``grammaticality`` task's
``latentstruct train`` without ``--option tagger_model=...``, and the online multi-view
experiment.
"""

from __future__ import annotations

import sys
import warnings

import numpy as np

from .data.paths import dataset_path, missing_data_message
from .exceptions import ConfigError, ConvergenceWarning
from .learners import StructuredSVM
from .tasks import PosTask
from .tasks.base import Dataset

__all__ = ["train_pos_tagger", "DEFAULT_TAGGER_SENTENCES"]

#: sentences of UD EWT train used by the default tagger (EWT dev accuracy ~0.92, ~20 s)
DEFAULT_TAGGER_SENTENCES = 3000


def train_pos_tagger(n_sentences: int = DEFAULT_TAGGER_SENTENCES, *, C: float = 0.1,
                     max_iter: int = 5, train_path=None, dev_path=None, random_state: int = 0,
                     verbose: bool = False) -> tuple[PosTask, np.ndarray, float | None]:
    """Train a UPOS tagger on the first ``n_sentences`` sentences of a CoNLL-U file.

    Parameters
    ----------
    n_sentences : int
        How many sentences of ``train_path`` to train on (all when larger than the file).
    C, max_iter : StructuredSVM's regularisation and outer-iteration cap (deterministic
        under ``random_state``).
    train_path, dev_path : CoNLL-U files; default UD English EWT train and dev under
        ``$LATENTSTRUCT_DATA/ud_english_ewt``.  The dev file is only used to report accuracy
        and may be absent.

    Returns
    -------
    (pos_task, coef, dev_accuracy) — the fitted task, its weights, and the UPOS accuracy on
    the dev file (None without one).
    """
    if not isinstance(n_sentences, int) or isinstance(n_sentences, bool) or n_sentences < 1:
        raise ConfigError(f"n_sentences must be a positive integer, got {n_sentences!r}")
    if train_path is None:
        train_path = dataset_path("ud_english_ewt", "en_ewt-ud-train.conllu")
        if not train_path.exists():
            raise ConfigError(
                "a POS tagger is needed and none was given, and the default training data is "
                "missing: " + missing_data_message("ud_english_ewt") + ". Alternatively train "
                "one with `latentstruct train pos --train en_ewt-ud-train.conllu --model pos.npz "
                "--learner ssvm` and pass --option tagger_model=pos.npz")
        if dev_path is None:
            dev_path = dataset_path("ud_english_ewt", "en_ewt-ud-dev.conllu")
    pos = PosTask(min_count=2)
    data = pos.read(train_path)
    sub = Dataset(data.records[:n_sentences], data.targets[:n_sentences])
    if verbose:
        print(f"training the POS tagger on {len(sub)} sentences of {train_path}", file=sys.stderr)
    pos.fit(sub)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        svm = StructuredSVM(pos, C=C, max_iter=max_iter, random_state=random_state)
        svm.fit(pos.featurize(sub), pos.encode_targets(sub.targets))
    acc = None
    if dev_path is not None and dev_path.exists():
        dev = pos.read(dev_path)
        pred = svm.predict(pos.featurize(dev))
        acc = float(pos.evaluate(pos.encode_targets(dev.targets), pred)["accuracy"])
        if verbose:
            print(f"  POS tagger accuracy on {dev_path}: {acc:.4f}", file=sys.stderr)
    return pos, svm.coef_, acc
