"""`python -m tempo_eval`: see tempo_eval.cli."""

import sys

from tempo_eval.cli import main

if __name__ == "__main__":
    sys.exit(main())
