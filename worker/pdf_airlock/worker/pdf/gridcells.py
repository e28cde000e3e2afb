"""The cells and tables of a grid of rules, found with a bounded amount of work.

Input: the intersections of a page's merged edges (pdfplumber's ``edges_to_intersections``: a
point -> the vertical and horizontal edges through it), from an untrusted document's rules.

The same answer as pdfplumber's ``intersections_to_cells`` and ``cells_to_tables`` (MIT): for
each intersection in (x, y) order, the smallest cell whose four corners are intersections joined
by common edges; then the groups of cells that share a corner. pdfplumber's search scans every
later point for each point and recomputes the edge sets of both points for each check, so a
page of a few hundred crossing rules (a 2.5 KB content stream) takes minutes. Here each point's
column and row neighbours come from an index, its edge sets are computed once, and the checks a
page may make are counted: past ``MAX_CELL_CHECKS`` the page gets the typed ``complexity_limit``
error. Tables are the connected groups of a union-find over shared corners.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Final

from pdf_airlock.worker.contract import WorkerError

__all__ = ["MAX_CELL_CHECKS", "cells_of", "tables_of"]

# Edge checks of the cell search on one page (about a second of work at the most). A full grid
# needs four per intersection: a ruled table of 64 columns by 1,000 rows, about 260,000.
MAX_CELL_CHECKS: Final = 1_000_000

_Point = tuple[float, float]
_Box = tuple[float, float, float, float]


def _bbox(edge: dict[str, Any]) -> _Box:
    return (edge["x0"], edge["top"], edge["x1"], edge["bottom"])


class _Budget:
    def __init__(self) -> None:
        self.spent = 0

    def spend(self, count: int) -> None:
        self.spent += count
        if self.spent > MAX_CELL_CHECKS:
            raise WorkerError(
                "complexity_limit",
                f"a page's rules cross too often for the table finder (over {MAX_CELL_CHECKS} checks)",
                {"limit": MAX_CELL_CHECKS},
            )


def cells_of(intersections: dict[_Point, dict[str, list[dict[str, Any]]]]) -> list[_Box]:
    """Every cell the intersections describe (pdfplumber's ``intersections_to_cells``)."""
    budget = _Budget()
    vertical = {point: {_bbox(e) for e in edges["v"]} for point, edges in intersections.items()}
    horizontal = {point: {_bbox(e) for e in edges["h"]} for point, edges in intersections.items()}
    column: dict[float, list[_Point]] = defaultdict(list)
    row: dict[float, list[_Point]] = defaultdict(list)
    at: dict[_Point, tuple[int, int]] = {}  # a point's place in its column and in its row
    for point in sorted(intersections):  # (x, y) order: columns top to bottom, rows left to right
        at[point] = (len(column[point[0]]), len(row[point[1]]))
        column[point[0]].append(point)
        row[point[1]].append(point)

    def joined(a: _Point, b: _Point) -> bool:
        budget.spend(1)
        return bool(
            (a[0] == b[0] and vertical[a] & vertical[b]) or (a[1] == b[1] and horizontal[a] & horizontal[b])
        )

    def smallest(point: _Point) -> _Box | None:
        same_x, same_y = column[point[0]], row[point[1]]
        in_column, in_row = at[point]
        for i in range(in_column + 1, len(same_x)):
            under = same_x[i]
            if not joined(point, under):
                continue
            for j in range(in_row + 1, len(same_y)):
                beside = same_y[j]
                if not joined(point, beside):
                    continue
                corner = (beside[0], under[1])
                if corner in intersections and joined(corner, beside) and joined(corner, under):
                    return (point[0], point[1], corner[0], corner[1])
        return None

    return [cell for point in sorted(intersections) if (cell := smallest(point)) is not None]


def tables_of(cells: list[_Box]) -> list[list[_Box]]:
    """The cells grouped by shared corners, groups of two cells or more, each in the order the
    cells came, sorted by their top-left corner (pdfplumber's ``cells_to_tables``)."""
    parent = list(range(len(cells)))

    def root(index: int) -> int:
        while parent[index] != index:
            parent[index] = parent[parent[index]]
            index = parent[index]
        return index

    first_at: dict[_Point, int] = {}
    for index, (x0, top, x1, bottom) in enumerate(cells):
        for corner in ((x0, top), (x0, bottom), (x1, top), (x1, bottom)):
            other = first_at.setdefault(corner, index)
            parent[root(index)] = root(other)
    groups: dict[int, list[_Box]] = defaultdict(list)
    for index, cell in enumerate(cells):
        groups[root(index)].append(cell)
    tables = [group for group in groups.values() if len(group) > 1]
    return sorted(tables, key=lambda table: min((cell[1], cell[0]) for cell in table))
