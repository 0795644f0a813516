"""The audit questions in Trino SQL: what Athena runs over the Glue table, and DuckDB (translated by
sqlglot) over the local log's Parquet files. Pure: text in, text out.

One relation is read: the change log (`jobs.contract.audit.stream_record` columns plus the `dt`
partition). `records()` turns its stream records into the auditor's view, one row per eventID
however often the Pipe delivered it (`deliveries` counts the copies): userId and documentId from
the item, the actor (the new version's `updatedBy`; for a removal the service identity of a TTL
deletion, else the removed version's `updatedBy`), the version written (or removed), the status
before and after, the contract attributes whose values differ between the two images, the time
(the new version's `updatedAt`, the stream's time for a removal) and, when the record is not an
ordinary change of a document item, the anomaly (`jobs.contract.audit.Anomaly`). The questions
select `RECORD_COLUMNS` as text, in that order, so both engines hand back the same strings.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from jobs.contract import layout
from jobs.contract.actors import TTL_PRINCIPAL
from jobs.contract.audit import (
    CHANGE_ATTRIBUTES,
    EVENT_NAMES,
    REMOVE,
    TTL_ACTOR,
    TTL_IDENTITY_TYPE,
    Anomaly,
)
from jobs.contract.findings import Code
from jobs.sql import lit

# Trino's date_format: microseconds and a Z, what DuckDB's strftime writes too.
TIME_FORMAT = "%Y-%m-%dT%H:%i:%s.%fZ"
_TS = lit(r"\A" + layout.TS_PATTERN + r"\z")
# Firehose names a record's partition by its arrival; a record reaches the log within the Pipe's
# retries (the stream keeps records 24 hours), so a time window reads its days and two more.
DELIVERY_SLACK = timedelta(days=2)


def _prefix(build: Callable[[str], str]) -> str:
    """The literal part of a key the layout builds (the user key's prefix), from the builder itself."""
    return build("x").removesuffix("x")


def _changed() -> str:
    checks = ", ".join(
        f"CASE WHEN r.oldimage.{a.lower()} IS DISTINCT FROM r.newimage.{a.lower()} THEN {lit(a)} END"
        for a in CHANGE_ATTRIBUTES
    )
    return f"filter(ARRAY[{checks}], x -> x IS NOT NULL)"


def _anomaly() -> str:
    written = f"r.eventname <> {lit(REMOVE)}"

    def image(path: str) -> str:  # the image the change is about: the new one, the old for a removal
        return f"CASE WHEN {written} THEN r.newimage.{path} ELSE r.oldimage.{path} END"

    cases = [
        (f"r.eventname IS NULL OR r.eventname NOT IN ({', '.join(map(lit, EVENT_NAMES))})", Anomaly.UNKNOWN_EVENT),
        (
            f"NOT (starts_with(coalesce(r.pk, ''), {lit(_prefix(layout.user_pk))})"
            f" AND starts_with(coalesce(r.sk, ''), {lit(_prefix(layout.document_sk))}))",
            Anomaly.KEYS_OUTSIDE_LAYOUT,
        ),
        (f"({image('userid.s')}) IS NULL OR ({image('documentid.s')}) IS NULL", Anomaly.NO_IDS),
        (f"TRY_CAST({image('version.n')} AS bigint) IS NULL", Anomaly.NO_VERSION),
        (f"{written} AND r.newimage.updatedby.s IS NULL", Anomaly.NO_ACTOR),
        (f"{written} AND NOT regexp_like(coalesce(r.newimage.updatedat.s, ''), {_TS})", Anomaly.BAD_TIME),
    ]
    return "CASE " + " ".join(f"WHEN {test} THEN {lit(text)}" for test, text in cases) + " END"


def records(relation: str, where: str = "") -> str:
    """CTEs `copies` and `records` over `relation` (a table or a parenthesised subquery).

    The log holds the records of a partition's other items too (the Pipe passes every record):
    the duplicate markers, written with their document's own versions, and the erasure marker,
    an erasure run's progress (its receipt is the record of the erasure). They are bookkeeping,
    not documents, so `records` leaves them out of every question and of the completeness rule.
    """
    removal = f"r.eventname = {lit(REMOVE)}"
    ttl = f"r.identitytype = {lit(TTL_IDENTITY_TYPE)} AND r.principal = {lit(TTL_PRINCIPAL)}"
    return f"""copies AS (
  SELECT c.eventid, c.eventname, c.dynamodb.sequencenumber AS seq, c.dynamodb.approximatecreationdatetime AS streamtime,
         c.dynamodb.keys.pk.s AS pk, c.dynamodb.keys.sk.s AS sk, c.dynamodb.newimage AS newimage,
         c.dynamodb.oldimage AS oldimage, c.useridentity.type AS identitytype, c.useridentity.principalid AS principal,
         row_number() OVER (PARTITION BY c.eventid ORDER BY c.dynamodb.sequencenumber) AS copy,
         count(*) OVER (PARTITION BY c.eventid) AS deliveries
  FROM {relation} c {where}
),
records AS (
  SELECT r.eventid, r.seq, r.eventname, r.deliveries, r.pk, r.sk,
         coalesce(r.newimage.userid.s, r.oldimage.userid.s) AS userid,
         coalesce(r.newimage.documentid.s, r.oldimage.documentid.s) AS documentid,
         coalesce(r.newimage.createdat.s, r.oldimage.createdat.s) AS generation,
         r.oldimage.createdat.s AS oldgeneration, r.streamtime,
         CASE WHEN {removal} AND {ttl} THEN {lit(TTL_ACTOR)}
              WHEN {removal} THEN r.oldimage.updatedby.s ELSE r.newimage.updatedby.s END AS actor,
         TRY_CAST(r.newimage.version.n AS bigint) AS newversion,
         TRY_CAST(r.oldimage.version.n AS bigint) AS oldversion,
         r.newimage.updatedat.s AS newupdatedat, r.oldimage.updatedat.s AS oldupdatedat,
         r.oldimage.status.s AS statusbefore, r.newimage.status.s AS statusafter,
         CASE WHEN NOT {removal} AND regexp_like(coalesce(r.newimage.updatedat.s, ''), {_TS})
              THEN from_iso8601_timestamp(r.newimage.updatedat.s) ELSE from_unixtime(r.streamtime) END AS at,
         {_changed()} AS changed,
         {_anomaly()} AS anomaly
  FROM copies r
  WHERE r.copy = 1 AND NOT starts_with(coalesce(r.sk, ''), {lit(layout.marker_sk_prefix())})
    AND coalesce(r.sk, '') <> {lit(layout.erasure_sk())}
    AND coalesce(r.pk, '') <> {lit(layout.textract_pages_pk())}
)"""


# The auditor's columns (jobs.contract.audit.RECORD_COLUMNS, in order), as text.
_SELECTED = f"""eventid, seq, eventname, date_format(at, {lit(TIME_FORMAT)}), userid, documentid, actor,
  CAST(CASE WHEN eventname = {lit(REMOVE)} THEN oldversion ELSE newversion END AS varchar), statusbefore, statusafter,
  array_join(changed, ','), CAST(deliveries AS varchar), anomaly"""
_REMOVED = f"CASE WHEN eventname = {lit(REMOVE)} THEN 1 ELSE 0 END"
_STREAM_ORDER = "streamtime, lpad(seq, 40, '0')"


def history(relation: str, user_id: str, document_id: str) -> str:
    """One document's timeline, oldest first: lifetimes (a new item under the same ids after a
    removal is a new one; removals placed by stream order), then version (every write adds one),
    a removal after the version it removed.
    """
    where = f"userid = {lit(user_id)} AND documentid = {lit(document_id)}"
    lifetime = (
        f"coalesce(sum({_REMOVED}) OVER (ORDER BY {_STREAM_ORDER} ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0)"
    )
    timeline = f"SELECT *, {lifetime} AS lifetime FROM records WHERE {where}"
    order = f"lifetime, coalesce(newversion, oldversion), {_REMOVED}, lpad(seq, 40, '0')"
    return f"WITH {records(relation)},\ntimeline AS ({timeline})\nSELECT {_SELECTED}\nFROM timeline\nORDER BY {order}"


def by_actor(relation: str, actor: str, since: datetime, until: datetime) -> str:
    """What `actor` changed in [since, until), in time order (only the delivery days that can
    hold such records are read: Athena prunes the other partitions).
    """
    days = (
        f"c.{layout.AUDIT_PARTITION} BETWEEN {lit(f'{since:%Y-%m-%d}')} AND {lit(f'{until + DELIVERY_SLACK:%Y-%m-%d}')}"
    )
    start, end = (f"from_iso8601_timestamp({lit(layout.format_ts(t))})" for t in (since, until))
    where = f"actor = {lit(actor)} AND at >= {start} AND at < {end}"
    body = f"SELECT {_SELECTED}\nFROM records WHERE {where}\nORDER BY at, {_STREAM_ORDER}, eventid"
    return f"WITH {records(relation, 'WHERE ' + days)}\n{body}"


# --- completeness (the reconcile's rule: jobs/reconcile/rules/audit_rule.py) ---------------------------
def completeness(changes: str, items: str, settled_before: str, since: str | None, window_start: str | None) -> str:
    """Versions known to exist whose change is not in the log (AUDIT_GAP, one row per document
    generation, the missing versions listed), and records that are anomalies (AUDIT_ANOMALY), as
    the reconcile's wide rows. `items` has userid, documentid, version, createdat, updatedat.

    A version is known from the table (each item's current version) and from the log itself (a
    write's new version, and the old version a MODIFY or REMOVE replaced): every version but the
    current one is named by the record of the version after it, so a lost record is always
    caught — by the next version's old image, or by the item. Every write adds one to the
    version, so each version between two known ones existed too: the gap lists them all (from
    the lowest known version, which for an item repair rebuilt at version 2 is 2). A version is
    required once it is settled (written before `settled_before`, Firehose's buffer and the
    Pipe's retries allowing), no older than `since` (the log's start; versions written before a
    stack had its log need no record) and, for a nightly check, no older than `window_start`
    (only the delivery days from then on are read; earlier versions were checked by earlier
    runs). Copies count once.
    """
    ts = f"regexp_like(updatedat, {_TS})"
    floors = [f"updatedat <= {lit(settled_before)}"]
    floors += [f"updatedat >= {lit(t)}" for t in (since, window_start) if t]
    days = f"WHERE c.{layout.AUDIT_PARTITION} >= {lit(window_start[:10])}" if window_start else ""
    ids = "userid IS NOT NULL AND documentid IS NOT NULL AND generation IS NOT NULL AND version IS NOT NULL"
    return f"""WITH {records(changes, days)},
known AS (
  SELECT userid, documentid, createdat AS generation, version, updatedat FROM {items}
  UNION ALL
  SELECT userid, documentid, generation, newversion, newupdatedat FROM records WHERE eventname <> {lit(REMOVE)}
  UNION ALL
  SELECT userid, documentid, oldgeneration, oldversion, oldupdatedat FROM records WHERE oldversion IS NOT NULL
),
required AS (
  SELECT DISTINCT userid, documentid, generation, version FROM known
  WHERE {ids} AND {ts} AND {" AND ".join(floors)}
),
bounds AS (
  SELECT userid, documentid, generation, min(version) AS lo, max(version) AS hi FROM required
  GROUP BY userid, documentid, generation
),
present AS (
  SELECT userid, documentid, generation, array_agg(DISTINCT newversion) AS versions FROM records
  WHERE eventname <> {lit(REMOVE)} AND newversion IS NOT NULL GROUP BY userid, documentid, generation
),
gaps AS (
  SELECT b.userid, b.documentid, b.generation,
         filter(sequence(b.lo, b.hi), v -> NOT contains(coalesce(p.versions, CAST(ARRAY[] AS array(bigint))), v))
           AS missing
  FROM bounds b LEFT JOIN present p
    ON p.userid = b.userid AND p.documentid = b.documentid AND p.generation = b.generation
)
SELECT {lit(Code.AUDIT_GAP)} AS code, userid AS user_id, documentid AS document_id, CAST(NULL AS varchar) AS pk,
       CAST(NULL AS varchar) AS sk, generation AS ev_created_at, array_max(missing) AS ev_version,
       array_join(transform(missing, v -> CAST(v AS varchar)), ',') AS ev_missing,
       CAST(NULL AS varchar) AS ev_event_id, CAST(NULL AS varchar) AS ev_problems
FROM gaps WHERE cardinality(missing) > 0
UNION ALL
SELECT {lit(Code.AUDIT_ANOMALY)}, userid, documentid, pk, sk, generation, coalesce(newversion, oldversion),
       NULL, eventid, anomaly
FROM records WHERE anomaly IS NOT NULL"""
