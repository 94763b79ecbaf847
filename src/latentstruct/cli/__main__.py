"""``python -m latentstruct.cli``."""

import sys

from . import main

sys.exit(main())
