"""Ground floor: the shapes and small utilities every floor speaks (columns, results, missing
values, safe text, secrets, confined paths, who is acting). Nothing here imports the rest of
tempo_eval."""

__version__ = "0.1.0"  # tempo_eval.__version__; here so that every floor may read it
