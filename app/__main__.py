"""``python -m app`` is the ``mjrig`` command."""
import sys

from app.cli import main

sys.exit(main())
