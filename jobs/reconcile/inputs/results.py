"""result.json contents for --deep: every listed result.json read and parsed as the contract's model.

An inventory does not hold object contents, so --deep GETs each result.json whichever source
listed it (threads). A file gone since the listing, one in an archive storage class (GLACIER,
DEEP_ARCHIVE: S3 answers InvalidObjectState until it is restored), or one that is not a
`ResultDocument`, is a row with its reason (`readError`), judged as RESULT_UNREADABLE, never an
aborted run.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import polars as pl
from pydantic import ValidationError

from jobs.contract import ResultDocument, bare_etag
from jobs.errors import S3ObjectArchivedError, S3ObjectMissingError
from jobs.reconcile.rules.frames import RESULTS_SCHEMA, chunked, concat

if TYPE_CHECKING:
    from jobs.store.s3 import Buckets

ARCHIVED_HINT = "restore it with `python -m jobs restore-archived`, then run --deep again"


def result_row(key: str, data: bytes | None) -> dict[str, Any]:
    """The fields --deep compares, from result.json parsed as the contract's ResultDocument (the
    one way it is read, repair included); `data` None: the object is gone since the listing.
    """
    row: dict[str, Any] = {"key": key} | dict.fromkeys(RESULTS_SCHEMA.keys() - {"key"})
    if data is None:
        return row | {"readError": "result.json is gone (deleted after the listing or inventory was taken)"}
    try:
        doc = ResultDocument.from_json_bytes(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "document"
        return row | {"readError": f"not a ResultDocument: {where}: {first['msg']}"[:300]}
    # As the document now stands: a reviewer's corrections and settlement stand beside the
    # machine's reading, and the item repeats them.
    invoice = doc.current_invoice
    amount = invoice.totalAmount if invoice else None
    return row | {
        "userId": doc.userId,
        "documentId": doc.documentId,
        "status": doc.current_status.value,
        "vendorName": invoice.vendorName if invoice else None,
        "invoiceDate": invoice.invoiceDate.isoformat() if invoice and invoice.invoiceDate else None,
        "totalAmount": None if amount is None else str(amount),
        "sourceUri": doc.source.uri,
        "sourceEtag": bare_etag(doc.source.etag),
    }


def read_results(buckets: Buckets, bucket: str, keys: list[str], threads: int) -> pl.DataFrame:
    """GET every result.json (threads); used by --deep with either source."""

    def one(key: str) -> dict[str, Any]:
        try:
            return result_row(key, buckets.get_bytes(bucket, key))
        except S3ObjectMissingError:
            return result_row(key, None)
        except S3ObjectArchivedError as exc:
            return result_row(key, None) | {"readError": f"{exc.reason}: result.json is archived ({ARCHIVED_HINT})"}

    with ThreadPoolExecutor(threads, thread_name_prefix="deep") as pool:
        return concat(list(chunked(pool.map(one, keys), RESULTS_SCHEMA)), RESULTS_SCHEMA)
