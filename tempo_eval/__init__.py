"""tempo-eval: evaluate retrieval-augmented generation with time as a first-class dimension.

Importing this package is cheap: torch, transformers, sentence-transformers and openai are
imported only by the code paths that need them.
"""

from tempo_eval.slices.report import slices

__all__ = ["slices"]
__version__ = "0.1.0"
