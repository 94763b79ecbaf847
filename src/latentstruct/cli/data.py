"""``latentstruct data list`` and ``latentstruct data fetch NAME``: the corpora of
:mod:`latentstruct.datasets` from the command line."""

from __future__ import annotations

import json
import sys
import time

from ..datasets import DATASETS, FetchError, fetch, list_datasets
from ..exceptions import ConfigError


def _size(n: int) -> str:
    return f"{n / 2**20:.1f} MB" if n >= 2**20 else f"{n / 2**10:.0f} kB"


def cmd_data_list(args) -> int:
    from ..data.paths import data_home_source, data_root

    home = data_root() if args.data_home is None else args.data_home
    rows = list_datasets(args.data_home)
    if args.format == "json":
        for row in rows:
            print(json.dumps(row, ensure_ascii=False))
        return 0
    where = (f"data home: {home} ({data_home_source()})" if args.data_home is None
             else f"data home: {home}")
    print(where)
    width = max(len(r["name"]) for r in rows)
    for row in rows:
        present = row["present"]
        state = ("present" if present is True else "missing" if present is False
                 else "a different file is in the way")
        how = {"download": "", "builder": "", "manual": " (terms to accept: fetch says where "
                                                       "to get it)"}[row["how"]]
        print(f"{row['name']:<{width}}  {_size(row['size']):>8}  {state:<8}  "
              f"{row['title']}{how}")
    print("fetch one with: latentstruct data fetch NAME")
    return 0


def cmd_data_fetch(args) -> int:
    names = list(args.names)
    if "all" in names:
        if names != ["all"]:
            raise ConfigError("give 'all' alone, or corpus names")
        names = [n for n, d in DATASETS.items() if d.fetch != "manual"]
    failed = []
    for name in names:
        start = time.perf_counter()
        try:
            bunch = fetch(name, data_home=args.data_home, mirror=args.mirror)
        except FetchError as exc:
            if len(names) == 1:
                raise
            print(f"latentstruct: error: {name}: {exc}", file=sys.stderr)
            failed.append(name)
            continue
        if not args.quiet:
            print(f"{name}: {bunch.folder} ({time.perf_counter() - start:.1f}s)")
    if failed:
        raise FetchError(f"{len(failed)} of {len(names)} corpora could not be fetched: "
                         f"{', '.join(failed)} (the reasons are above)")
    return 0


def cmd_data_path(args) -> int:
    from ..datasets import UD_TREEBANKS

    dataset = UD_TREEBANKS.get(args.name) or DATASETS.get(args.name)
    if dataset is not None and args.key is not None and args.key not in dataset.splits:
        raise ConfigError(f"corpus {dataset.name!r} has no file {args.key!r}; its files: "
                          f"{', '.join(dataset.splits)}")
    bunch = fetch(args.name, data_home=args.data_home, mirror=args.mirror)
    print(bunch.folder if args.key is None else bunch[args.key])
    return 0
