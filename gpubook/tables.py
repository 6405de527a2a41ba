"""Small tables that render as real tables in a notebook and in the book.

:func:`table` takes rows (dicts of column -> value) and returns an object that Jupyter
shows as an HTML table (``_repr_html_``), that Markdown exports show as a Markdown table
(``_repr_markdown_``), and that prints as aligned text. Numbers are shown with ``fmt``.
"""

from __future__ import annotations

import html
from typing import Any, Iterable, Mapping, Sequence

__all__ = ["Table", "table"]


class Table:
    """Rows of a table (each a mapping of column name -> value) and a caption."""

    def __init__(
        self, rows: Iterable[Mapping[str, Any]], caption: str = "", fmt: str = ".3g"
    ):
        rows = list(rows)
        if not rows:
            raise ValueError("rows must hold at least one row")
        for row in rows:
            if not isinstance(row, Mapping):
                raise TypeError(f"each row must be a mapping, got {type(row).__name__}")
        columns: list[str] = []
        for row in rows:
            columns += [key for key in row if key not in columns]
        self.columns = columns
        self.rows = [dict(row) for row in rows]
        self.caption = caption
        self.fmt = fmt

    def cell(self, row: Mapping[str, Any], column: str) -> str:
        """The display string of one cell (numbers with ``fmt``, missing: empty)."""
        value = row.get(column, "")
        if isinstance(value, bool) or value is None:
            return "" if value is None else str(value)
        if isinstance(value, float):
            return "–" if value != value else format(value, self.fmt)
        return str(value)

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{html.escape(c)}</th>" for c in self.columns)
        body = "".join(
            "<tr>"
            + "".join(f"<td>{html.escape(self.cell(r, c))}</td>" for c in self.columns)
            + "</tr>"
            for r in self.rows
        )
        note = f"<p><em>{html.escape(self.caption)}</em></p>" if self.caption else ""
        return (
            f'<table class="gpubook-table"><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table>{note}"
        )

    def _repr_markdown_(self) -> str:
        lines = [
            "| " + " | ".join(self.columns) + " |",
            "|" + "|".join(" --- " for _ in self.columns) + "|",
        ]
        lines += [
            "| "
            + " | ".join(self.cell(r, c).replace("|", "\\|") for c in self.columns)
            + " |"
            for r in self.rows
        ]
        return "\n".join(lines) + (f"\n\n*{self.caption}*\n" if self.caption else "\n")

    def __str__(self) -> str:
        cells = [[self.cell(r, c) for c in self.columns] for r in self.rows]
        widths = [
            max(len(c), *(len(row[i]) for row in cells))
            for i, c in enumerate(self.columns)
        ]
        lines = ["  ".join(c.ljust(w) for c, w in zip(self.columns, widths))]
        lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths)) for row in cells]
        text = "\n".join(line.rstrip() for line in lines)
        return text + (f"\n({self.caption})" if self.caption else "")

    __repr__ = __str__


def table(
    rows: Sequence[Mapping[str, Any]], caption: str = "", fmt: str = ".3g"
) -> Table:
    """A :class:`Table` of ``rows`` (mappings of column -> value)."""
    return Table(rows, caption, fmt)
