"""CSV for people: the one writer of every CSV file a person opens in a spreadsheet.

findings.csv (`report`) and the month's findings-opened/-closed.csv (`jobs.reports.pack`) carry
text from outside: S3 keys, user and document ids, evidence. A cell that begins with `=`, `+`,
`-`, `@`, a tab or a carriage return is a formula to Excel, LibreOffice and Google Sheets
(`=HYPERLINK(...)` in a key is a link that leaks the sheet), so such a text cell is written with
a single quote in front, as OWASP's CSV-injection guidance says: spreadsheets show the text, not
its result. Quoting stays CSV's own (RFC 4180: a cell with a comma, quote or line break in double
quotes, inner quotes doubled). Only text columns change: numbers and datetimes are no formulas,
and a negative number stays a number. Machine CSV (the S3 Inventory stand-in's data files) is not
written here: it must stay byte for byte what AWS writes. Pure.
"""

from __future__ import annotations

import io

import polars as pl

# OWASP: "=", "+", "-", "@", tab (0x09) and carriage return (0x0D) start a formula.
_FORMULA_START = r"^[=+\-@\t\r]"
_TEXT = (pl.String, pl.Categorical, pl.Enum)


def spreadsheet_csv(frame: pl.DataFrame) -> bytes:
    """`frame` as CSV bytes (header first) with every text cell that could run as a formula escaped."""
    text = [name for name, dtype in frame.schema.items() if isinstance(dtype, _TEXT) or dtype == pl.String]
    buffer = io.BytesIO()
    frame.with_columns(_escaped(name) for name in text).write_csv(buffer)
    return buffer.getvalue()


def _escaped(name: str) -> pl.Expr:
    cell = pl.col(name).cast(pl.String)
    return pl.when(cell.str.contains(_FORMULA_START)).then(pl.lit("'") + cell).otherwise(cell).alias(name)
