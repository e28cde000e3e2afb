"""``pdf-airlock self-test``: the sandbox probe (``pdf_airlock.server.pool.probe``) as a table."""

from __future__ import annotations

__all__ = ["render_table"]


def render_table(layers: dict[str, str]) -> str:
    rows = [("layer", "status", "detail")]
    for name, status in layers.items():
        state, _, detail = status.partition(": ")
        rows.append((name, state, detail))
    width = [max(len(row[i]) for row in rows) for i in range(2)]
    return "\n".join(f"{a:<{width[0]}}  {b:<{width[1]}}  {c}".rstrip() for a, b, c in rows)
