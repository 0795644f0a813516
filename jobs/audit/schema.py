"""The change log's columns as Arrow types: what its Parquet files hold (jobs.contract.audit
defines them as Hive types, which Glue and Firehose use), for the local writer and the local reader.
"""

from __future__ import annotations

import pyarrow as pa

from jobs.contract.audit import Array, HiveType, Struct, stream_record

_PRIMITIVES: dict[str, pa.DataType] = {
    "string": pa.string(),
    "double": pa.float64(),
    "bigint": pa.int64(),
    "boolean": pa.bool_(),
}


def arrow_type(t: HiveType) -> pa.DataType:
    """The Arrow type Parquet stores for a Hive type (names lowercased, as Glue has them)."""
    if isinstance(t, str):
        return _PRIMITIVES[t]
    if isinstance(t, Array):
        return pa.list_(arrow_type(t.element))
    return pa.struct([pa.field(name.lower(), arrow_type(inner)) for name, inner in t.fields])


def changes_schema(record: Struct | None = None) -> pa.Schema:
    """The Parquet schema of a change-log file (the stream record's top-level columns)."""
    return pa.schema([pa.field(name.lower(), arrow_type(t)) for name, t in (record or stream_record()).fields])
