"""Trino SQL shared by the reconcile and the audit: its string literal, and its translation to
DuckDB's dialect (both packages run the same Trino text on Athena and, locally, on DuckDB).

Neutral ground: the reconcile's rules and the audit trail's questions both import it, so neither
package imports the other for it (the reconcile's change-log check uses the audit, one way).
Pure: sqlglot only.
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp

__all__ = ["lit", "to_duckdb"]


def lit(value: str) -> str:
    """A Trino string literal."""
    return "'" + value.replace("'", "''") + "'"


def to_duckdb(trino_sql: str) -> str:
    """The Trino query in DuckDB's dialect (sqlglot), plus the two gaps sqlglot leaves open here:
    `length(to_utf8(x))` (bytes of a string) becomes `strlen(x)`, `normalize(x, NFC)`
    becomes `nfc_normalize(x)`.
    """
    tree = sqlglot.parse_one(trino_sql, read="trino")

    def fill_gaps(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Length) and isinstance(node.this, exp.Encode):
            return exp.Anonymous(this="strlen", expressions=[node.this.this])
        if isinstance(node, exp.Normalize):
            if str(node.args.get("form", "NFC")).upper() != "NFC":
                raise ValueError(f"only NFC normalisation is translated, not {node.args.get('form')}")
            return exp.Anonymous(this="nfc_normalize", expressions=[node.this])
        return node

    return tree.transform(fill_gaps).sql(dialect="duckdb")
