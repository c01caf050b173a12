"""Scores over time: a stored run's per-row scores sliced by as-of date, focus year or evidence
year, per bin a mean with its interval, paired differences between runs, and where the level
changes (`slices`; the statistics in `tempo_eval.slices.stats`)."""
