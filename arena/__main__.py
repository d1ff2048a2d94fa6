"""``python -m arena`` is the ``arena`` command."""

import sys

from .cli.main import main

sys.exit(main())
