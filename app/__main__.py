"""``python -m mjrig`` is the ``mjrig`` command."""

import sys

from mjrig.entry import main

if __name__ == "__main__":  # guarded: the panel process (spawn) re-imports this module
    sys.exit(main())
