"""``python -m latentstruct.cli``."""

import sys

from . import main

if __name__ == "__main__":  # worker processes (loky, a local Dask cluster) re-import this
    sys.exit(main())
