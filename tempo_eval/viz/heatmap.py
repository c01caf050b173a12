"""Year-against-year heatmaps: which years the queries (or answers) ask about versus which years
the retrieved documents (or contexts) talk about.

The data step is pure: `year_heatmap(items)` takes (key, row years, column years) triples, bins
the years, counts each item once in every (row bin, column bin) cell its years fall into and
remembers which keys are behind each cell, so a selected cell can list its rows.

Bins: one year when the years span at most 40 years, a decade up to 400 years, otherwise a
century. Rows and columns use the same bins (those that hold a year on either side), so the
diagonal is a straight line, not a staircase. Only bins that hold a year are shown (a 1066-to-2022
span is some 40 occupied decades, not 96), and at most `MAX_BINS` of them: with more, years are
merged into decades (and decades into centuries), so a page is never thousands of pixels tall.
An item with no year on either side is counted in `n_without_years` and not drawn.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field

import numpy as np
import plotly.graph_objects as go

from tempo_eval.common.safe_text import plotly_text

BIN_WIDTHS = {"year": 1, "decade": 10, "century": 100}
#: the most bins an axis shows; beyond it bins are merged into the next wider ones
MAX_BINS = 40


def auto_bin_width(years: Iterable[int]) -> int:
    """1, 10 or 100: the bin that keeps the axis readable for this span of years."""
    values = list(years)
    if not values:
        return 1
    span = max(values) - min(values)
    if span <= 40:
        return 1
    if span <= 400:
        return 10
    return 100


def bin_start(year: int, width: int) -> int:
    """The first year of the bin holding `year` (floor division, so 476 -> 470 for decades)."""
    return (year // width) * width


def bin_label(start: int, width: int) -> str:
    """"1989", "1980s" or "1900–1999"."""
    if width == 1:
        return str(start)
    if width == 10:
        return f"{start}s"
    return f"{start}–{start + width - 1}"


@dataclass
class YearHeatmap:
    """Counts per (row bin, column bin) and the keys behind every cell.

    `counts[i, j]` counts the items with a year in `row_bins[i]` and a year in `col_bins[j]`;
    `cells[(row_label, col_label)]` lists their keys in input order.
    """

    width: int
    row_bins: list[int]
    col_bins: list[int]
    counts: np.ndarray
    cells: dict[tuple[str, str], list[Hashable]] = field(default_factory=dict)
    n_items: int = 0
    n_without_years: int = 0
    #: the width asked for, when more than MAX_BINS bins of it made the bins wider
    requested_width: int | None = None

    @property
    def row_labels(self) -> list[str]:
        return [bin_label(b, self.width) for b in self.row_bins]

    @property
    def col_labels(self) -> list[str]:
        return [bin_label(b, self.width) for b in self.col_bins]

    def keys_for(self, row_label: str, col_label: str) -> list[Hashable]:
        """The items counted in one cell ([] for an empty or unknown cell)."""
        return list(self.cells.get((str(row_label), str(col_label)), []))

    @property
    def diagonal_share(self) -> float:
        """Share of counted items with at least one cell on the diagonal (same bin both sides)."""
        if not self.n_items:
            return float("nan")
        on_diagonal = set()
        for (row, col), keys in self.cells.items():
            if row == col:
                on_diagonal.update(keys)
        return len(on_diagonal) / self.n_items


def year_heatmap(
    items: Iterable[tuple[Hashable, Iterable[int], Iterable[int]]],
    *,
    width: int | None = None,
) -> YearHeatmap:
    """Bin and count (key, row years, column years) items; `width` 1/10/100 or None for auto."""
    materialised = [(key, set(rows), set(cols)) for key, rows, cols in items]
    counted = [(key, rows, cols) for key, rows, cols in materialised if rows and cols]
    if width is None:
        width = auto_bin_width(y for _, rows, cols in counted for y in rows | cols)
    if width not in BIN_WIDTHS.values():
        raise ValueError(f"width must be 1, 10 or 100 (or None for automatic), got {width!r}")
    years = {y for _, rows, cols in counted for y in rows | cols}
    requested = width
    while len({bin_start(y, width) for y in years}) > MAX_BINS and width < max(BIN_WIDTHS.values()):
        width *= 10  # years into decades, decades into centuries
    # the same bins on both axes, so a year on both sides is on the diagonal
    row_bins = col_bins = sorted({bin_start(y, width) for y in years})
    row_index = col_index = {b: i for i, b in enumerate(row_bins)}
    counts = np.zeros((len(row_bins), len(col_bins)), dtype=int)
    cells: dict[tuple[str, str], list[Hashable]] = {}
    for key, rows, cols in counted:
        for r in sorted({bin_start(y, width) for y in rows}):
            for c in sorted({bin_start(y, width) for y in cols}):
                counts[row_index[r], col_index[c]] += 1
                cells.setdefault((bin_label(r, width), bin_label(c, width)), []).append(key)
    return YearHeatmap(
        width=width, row_bins=row_bins, col_bins=col_bins, counts=counts, cells=cells,
        n_items=len(counted), n_without_years=len(materialised) - len(counted),
        requested_width=requested if requested != width else None,
    )


def heatmap_figure(
    data: YearHeatmap, *, row_title: str, col_title: str, title: str = "", colorscale: str = "Blues"
) -> go.Figure:
    """A heatmap of `data`: rows on the y axis, columns on the x axis, empty cells blank."""
    fig = go.Figure()
    if not data.n_items:
        fig.add_annotation(text="No item has years on both sides", showarrow=False, x=0.5, y=0.5,
                           xref="paper", yref="paper")
        fig.update_layout(title=plotly_text(title), xaxis={"visible": False}, yaxis={"visible": False})
        return fig
    z = data.counts.astype(float)
    z[z == 0] = np.nan  # blank, not the lowest colour
    show_text = z.size <= 400
    top, cap = int(data.counts.max()), colour_cap(data.counts)
    colorbar = {"title": "items", "tick0": 0, "dtick": count_tick(cap), "tickformat": "d"}
    if cap < top:  # one crowded cell does not wash the others out: it shares the darkest colour
        ticks = list(range(0, cap, count_tick(cap)))
        colorbar = {"title": "items", "tickvals": [*ticks, cap], "ticktext": [*map(str, ticks), f"≥ {cap}"]}
    hover = f"{plotly_text(row_title)} %{{y}}<br>{plotly_text(col_title)} %{{x}}<br>%{{customdata}} item(s)<extra></extra>"
    fig.add_trace(go.Heatmap(
        z=z, x=data.col_labels, y=data.row_labels, colorscale=colorscale, xgap=1, ygap=1,
        texttemplate="%{z:.0f}" if show_text else None,
        hoverinfo="skip",  # the cell markers below hover; an empty cell shows nothing
        colorbar=colorbar, zmin=0, zmax=max(cap, 1),
    ))
    # Plotly cannot select heatmap cells: one invisible square marker per non-empty cell makes a
    # click select the cell (Streamlit's on_select), and gives the hover its count
    rows, cols = np.nonzero(data.counts)
    fig.add_trace(go.Scatter(
        x=[data.col_labels[j] for j in cols], y=[data.row_labels[i] for i in rows],
        customdata=[int(data.counts[i, j]) for i, j in zip(rows, cols, strict=True)],
        mode="markers", marker={"symbol": "square", "size": CELL_MARKER_PX, "opacity": 0, "color": "#000"},
        selected={"marker": {"opacity": 0.25}}, unselected={"marker": {"opacity": 0}},
        hovertemplate=hover, showlegend=False, name="cells",
    ))
    fig.update_layout(
        title=plotly_text(title),
        xaxis={"title": plotly_text(col_title), "type": "category", "tickangle": -45},
        yaxis={"title": plotly_text(row_title), "type": "category", "autorange": "reversed"},
        margin={"t": TOP_PX, "l": 100, "r": 20, "b": BOTTOM_PX},
        height=figure_height(len(data.row_bins)),
        clickmode="event+select", dragmode=False, hovermode="closest",
    )
    return fig


#: the side of the invisible marker that makes a cell clickable (pixels)
CELL_MARKER_PX = 18
#: pixels per row of bins, so every row label and count stays legible however many bins there are
ROW_PX = 30
#: the margins above (title) and below (column labels at -45°, "1900–1999", and the axis title)
TOP_PX, BOTTOM_PX = 50, 120
#: the share of non-empty cells whose colours are spread over the whole scale (see `colour_cap`)
COLOUR_QUANTILE = 0.9


def figure_height(n_rows: int) -> int:
    """The heatmap's height for `n_rows` row bins: the plot area gives every row ROW_PX pixels,
    and the fixed margins hold the title and the slanted column labels (9 centuries get 440 px,
    some 40 decades 1,370 px, instead of being squeezed into 300); at least 320 px."""
    return max(320, ROW_PX * n_rows + TOP_PX + BOTTOM_PX)


def colour_cap(counts: np.ndarray) -> int:
    """The count that gets the darkest colour: the COLOUR_QUANTILE quantile of the non-empty
    cells' counts (one of them, not between two). A cell far above the others (22 where the rest hold 1 to 8) then
    shares the darkest colour instead of washing the others out; its true count stays in its
    text and hover. The largest count when at most two cells are non-empty; 0 for an empty map."""
    values = np.sort(np.asarray(counts)[np.asarray(counts) > 0])
    if values.size == 0:
        return 0
    if values.size <= 2:
        return int(values[-1])
    return int(np.quantile(values, COLOUR_QUANTILE, method="lower"))


def count_tick(max_count: int) -> int:
    """The colour bar's tick step: a whole number of items (1 for small counts), about 6 ticks."""
    return max(1, math.ceil(max_count / 6))


def cell_from_selection(selection: object) -> tuple[str, str] | None:
    """The (row label, column label) of the first point of a Streamlit plotly selection, or None."""
    if isinstance(selection, dict):
        points = (selection.get("selection") or {}).get("points") or []
    else:
        points = getattr(getattr(selection, "selection", None), "points", None) or []
    for point in points:
        x, y = point.get("x"), point.get("y")
        if x is not None and y is not None:
            return (str(y), str(x))
    return None
