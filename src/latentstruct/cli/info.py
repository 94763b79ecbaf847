"""``latentstruct demo`` and ``latentstruct info``."""

from __future__ import annotations

import json

__all__ = ["cmd_demo", "cmd_info"]


def cmd_demo(args) -> int:
    from ..demo import run_demo

    run_demo(lang=args.lang, out_dir=args.out, n_jobs=args.n_jobs, quiet=args.quiet)
    return 0


def cmd_info(args) -> int:
    from ..io import inspect_model

    print(json.dumps(inspect_model(args.model), indent=2, sort_keys=True))
    return 0
