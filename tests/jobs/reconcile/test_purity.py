"""The reconcile's shapes are derived from the contract (its import boundaries: tests/architecture)."""

from __future__ import annotations

import polars as pl
from hypothesis import given
from hypothesis import strategies as st

from jobs.contract import DocumentItem, bare_etag, layout
from jobs.reconcile.rules import frames, keys


def test_item_schema_is_a_projection_of_the_contract() -> None:
    for column, attribute in frames.ITEM_ATTRIBUTE_OF.items():
        if column not in frames.KEY_COLUMNS and column != frames.TTL_COLUMN:
            assert attribute in DocumentItem.model_fields, attribute
    # The TTL attribute is derived by the contract, like the keys (DocumentItem.expires_at).
    assert frames.ITEM_ATTRIBUTE_OF[frames.TTL_COLUMN] == layout.TTL_ATTR
    assert {"version", "attempts", "totalAmount", "expiresAt"} == frames.NUMERIC_ITEM_COLUMNS
    assert {"version", "attempts", "expiresAt"} == frames.INTEGER_ITEM_COLUMNS
    assert frames.ITEMS_SCHEMA["version"] == pl.Int64 and frames.ITEMS_SCHEMA["totalAmount"] == pl.String


@given(st.text(alphabet="\"ab' ", max_size=8))
def test_vectorised_unquoting_is_bare_etag(etag: str) -> None:
    assert pl.select(keys.unquoted(pl.lit(etag))).item() == bare_etag(etag)
