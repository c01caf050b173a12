"""`python -m tempo_eval`: see the tempo_eval.cli package."""

import sys

from tempo_eval.cli import main

if __name__ == "__main__":
    sys.exit(main())
