"""``python -m arena`` is the ``arena`` command."""

import sys

from .cli import main

sys.exit(main())
