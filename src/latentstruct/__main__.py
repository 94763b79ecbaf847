"""``python -m latentstruct``: the command line (:func:`latentstruct.cli.main`)."""

import sys

from .cli import main

if __name__ == "__main__":  # worker processes (loky, a local Dask cluster) re-import this
    sys.exit(main())
