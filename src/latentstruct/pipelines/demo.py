"""``latentstruct demo``: LCLR against the two-stage system on transliteration discovery.

Reproduces the shape of LCLR's Table 1 (Chang et al. 2010, §5.1) on data an installed
package ships: English–Hebrew (or Russian, Arabic) place names from the Unicode CLDR data
in Babel.  Both systems use the same features and the same latent alignment space; the
two-stage system fixes the alignment with a romanisation heuristic, LCLR learns it.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from ..exceptions import ConfigError
from ..learners import LCLR, TwoStage
from ..plotting import draw_explanation
from ..tasks.translit import TransliterationTask

__all__ = ["run_demo"]


def _cldr_release() -> str:
    """'CLDR 49 (Babel 2.19.0)': the names, and so the figures, change between releases."""
    import babel
    import babel.core

    cldr = getattr(babel.core, "get_cldr_version", None)  # not in every Babel we accept
    return f"CLDR {cldr() if cldr else '?'} (Babel {babel.__version__})"


def run_demo(lang: str = "he", out_dir=".", n_jobs: int = 1, quiet: bool = False,
             n_train: int = 250, n_test: int = 300, C: float = 0.1) -> dict:
    """Train both systems on ``n_train`` positive CLDR pairs, rank ``n_test`` others."""
    say = (lambda *a: None) if quiet else (lambda *a: print(*a, file=sys.stderr))
    if not Path(out_dir).is_dir():  # checked before the work, not after it
        raise ConfigError(f"--out {out_dir}: no such directory; create it first or pass an "
                          "existing folder for the alignment picture")
    t0 = time.perf_counter()
    task = TransliterationTask(lang=lang, n_train=n_train, n_test=n_test)
    train = task.read(None, split="train")
    test = task.read(None, split="test")
    task.fit(train)
    X, y = task.featurize(train), task.encode_targets(train.targets)
    n_pos = int((y > 0).sum())
    say(f"{_cldr_release()} English-{lang} names: {n_pos} positive and {len(y) - n_pos} "
        f"negative training pairs, {len(test)} test names ranked against each other")
    two = TwoStage(task, C=C, n_jobs=n_jobs).fit(X, y)
    say(f"two-stage trained in {time.perf_counter() - t0:.1f}s")
    lclr = LCLR(task, C=C, coef_init=two.coef_, n_jobs=n_jobs, progress=not quiet).fit(X, y)
    say(f"LCLR trained in {lclr.fit_time_:.1f}s ({lclr.n_iter_} outer iterations)")
    rows = {}
    for name, model in (("Alignment + Learning", two), ("LCLR", lclr)):
        rows[name] = task.evaluate_model(test, model.predict, model.decision_function)
    print(f"{'Transliteration system':24s} {'Acc':>6s} {'MRR':>6s}")
    for name, m in rows.items():
        print(f"{name:24s} {100 * m['accuracy']:6.1f} {100 * m['mrr']:6.1f}")
    source, target = test.records[0]
    x = task.encode_pair(source, target)
    out = Path(out_dir) / f"demo_alignment_{lang}.png"
    draw_explanation(task.structure_object().explain(x, lclr.coef_, lclr.latent_argmax([x])[0]), out,
                     title=f"LCLR alignment ({lang})")
    print(f"alignment picture: {out}")
    say(f"demo finished in {time.perf_counter() - t0:.1f}s")
    return rows
