"""Putting results side by side: paired statistics (`statistics`), TREC run scoring
(`trec_scores`), saved comparisons (`saved`), row-by-row run diffs (`run_diff`), the leaderboard,
the HTML report, human review and agreement between raters.

The package called is `compare(...)` (`statistics.compare`): `from tempo_eval import compare`
gives this package once any of its modules has been imported, so the public noun and the package
are one callable object. Importing the package imports none of its modules.
"""

from __future__ import annotations

import sys
from typing import Any


class _CallablePackage(type(sys.modules[__name__])):
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from tempo_eval.compare.statistics import compare

        return compare(*args, **kwargs)


sys.modules[__name__].__class__ = _CallablePackage
