"""What the report shows an auditor, rendered: the verdict, the scope, what changed since the night
before, each code present explained (from `findings.DEFINITIONS`, the rules' own definitions),
the trend of the last nights, summaries per code and per user, the top findings with their
evidence as fields, the acknowledged and the resolved ones, the repairs and the provenance.

The HTML comes from one Jinja2 template (`templates/report.html.j2`, autoescaped); the PDF is the
same HTML printed by WeasyPrint (pure Python over Debian's pango: the job image has no browser).
The trend is an SVG from pygal: pure Python, no dependencies of its own, no JavaScript once its
tooltips script is left out, a few hundred kB installed, against matplotlib's tens of MB.

A night with 100,000 findings must still open at once: the page lists at most `SHOWN` findings
and `USERS_SHOWN` users; the full list is in findings.csv/parquet and ledger.parquet.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import polars as pl
import pygal  # type: ignore[import-untyped]  # pygal ships no type hints
from jinja2 import Environment, PackageLoader, select_autoescape
from lxml import etree
from markupsafe import Markup
from pygal.style import Style  # type: ignore[import-untyped]

from jobs.reconcile.chain import coverage
from jobs.reconcile.chain.ledger import State
from jobs.reconcile.rules.findings import DEFINITIONS, SEVERITY_RANK, Code, Severity

if TYPE_CHECKING:
    from jobs.reconcile.summary import ReconcileSummary

logger = logging.getLogger(__name__)

SHOWN = 100
USERS_SHOWN = 20
LISTED = 100  # acknowledged / resolved rows listed
TREND_REPORTS = 30
_ENV = Environment(
    loader=PackageLoader("jobs.reconcile.report", "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
    trim_blocks=True,
    lstrip_blocks=True,
)
_WHERE = ("userId", "documentId", "bucket", "key", "pk", "sk")


def _duration(seconds: float) -> str:
    if not seconds:
        return "none (0s)"
    delta = timedelta(seconds=seconds)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return str(delta)


def _many(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


@dataclass(frozen=True)
class Verdict:
    headline: str
    css: str
    changes: str


def verdict(summary: ReconcileSummary, previous: ReconcileSummary | None) -> Verdict:
    errors, warnings = summary.severities.get("error", 0), summary.severities.get("warning", 0)
    if not summary.totalFindings:
        headline, css = "Clean: no findings.", "clean"
        if summary.notJudged:  # a night before the first inventory: nothing was judged, so nothing is clean
            headline, css = "Nothing judged yet.", "warnings"
    else:
        headline = f"{_many(summary.totalFindings, 'finding')}: {_many(errors, 'error')}, {_many(warnings, 'warning')}."
        css = "findings" if errors else "warnings"
    c = summary.changes
    since = (
        f"the previous report (run {previous.runId}, {previous.startedAt:%Y-%m-%d %H:%M} UTC)"
        if previous
        else "the start (no earlier report)"
    )
    changes = (
        f"Since {since}: {c.get('new', 0):,} new, {c.get('open', 0):,} still open, "
        f"{c.get('acknowledged', 0):,} acknowledged, {c.get('resolved', 0):,} resolved"
        + (f", {c['unchecked']:,} not checked tonight (carried)." if c.get("unchecked") else ".")
    )
    return Verdict(headline, css, changes)


def excluded(summary: ReconcileSummary) -> list[dict[str, str]]:
    """The codes this run's mode does not look for, and why (so a zero is not read as a check)."""
    return [
        {"codes": ", ".join(part.codes), "why": part.why}
        for part in coverage.excluded(summary.options, summary.engine, summary.notJudged)
    ]


def scope(summary: ReconcileSummary) -> dict[str, Any]:
    run, sc = coverage.Recorded.of(summary.options, summary.source), summary.scope
    grace = run.grace
    mode = "nightly chain" if run.nightly else run.mode
    if run.deep:
        mode += ", deep (result.json read)"
    inputs = [
        {
            "name": name,
            "where": summary.inputs.get(name, ""),
            "at": at.isoformat(),
            "checksum": summary.inputChecksums.get(name, "not available from this source"),
        }
        for name, at in summary.snapshotTimes.items()
    ]
    return {
        "table": sc.get("table", summary.inputs.get("table", "")),
        "buckets": [b for b in (sc.get("rawBucket"), sc.get("processedBucket")) if b],
        "mode": mode,
        "grace": _duration(grace),
        "graceCutoff": (summary.asOf - timedelta(seconds=grace)).isoformat(),
        "stuckAfter": _duration(run.stuck_after),
        "inputs": inputs,
        "excluded": excluded(summary),
    }


_NOT_FOUND = [State.RESOLVED.value, State.UNCHECKED.value]


def found_tonight(ledger: pl.DataFrame) -> pl.DataFrame:
    """The ledger's rows of findings found tonight (not resolved, not carried unchecked)."""
    return ledger.filter(~pl.col("state").is_in(_NOT_FOUND))


def per_code(ledger: pl.DataFrame) -> list[dict[str, Any]]:
    found = found_tonight(ledger)
    if not found.height:
        return []
    grouped = found.group_by("code").agg(
        pl.len().alias("count"),
        *[(pl.col("state") == s.value).sum().alias(s.value) for s in (State.NEW, State.OPEN, State.ACKNOWLEDGED)],
    )
    rows = []
    for row in grouped.iter_rows(named=True):
        code = Code(row["code"])
        d = DEFINITIONS[code]
        rows.append({**row, "severity": d.severity.value, "meaning": d.meaning, "cause": d.cause, "remedy": d.remedy})
    return sorted(rows, key=lambda r: (-SEVERITY_RANK[Severity(r["severity"])], -r["count"], r["code"]))


def per_user(ledger: pl.DataFrame) -> tuple[list[dict[str, Any]], int]:
    found = found_tonight(ledger).filter(pl.col("userId").is_not_null())
    grouped = found.group_by("userId").agg(
        pl.len().alias("count"), (pl.col("severity") == Severity.ERROR.value).sum().alias("errors")
    )
    top = grouped.sort(["count", "userId"], descending=[True, False]).head(USERS_SHOWN)
    return list(top.iter_rows(named=True)), grouped.height


def _fields(value: Any, prefix: str = "") -> list[tuple[str, str]]:
    """Evidence JSON flattened to (field, value) pairs; nested objects as `item.status`."""
    if isinstance(value, dict):
        return [pair for k, v in value.items() for pair in _fields(v, f"{prefix}{k}.")]
    return [(prefix.rstrip("."), "" if value is None else str(value))]


def _when(value: datetime | None) -> str:
    return "" if value is None else f"{value:%Y-%m-%d}"


def top_findings(ledger: pl.DataFrame, findings: pl.DataFrame) -> list[dict[str, Any]]:
    """The SHOWN findings an auditor looks at first: errors, then the longest open, new ones last."""
    rank = pl.col("severity").replace_strict({s.value: r for s, r in SEVERITY_RANK.items()}, return_dtype=pl.Int8)
    shown = (
        found_tonight(ledger)
        .sort([rank, pl.col("nightsOpen"), pl.col("code"), pl.col("findingId")], descending=[True, True, False, False])
        .head(SHOWN)
        .join(findings.select("findingId", "evidence"), on="findingId", how="left", maintain_order="left")
    )
    rows = []
    for row in shown.iter_rows(named=True):
        evidence = json.loads(row["evidence"]) if row["evidence"] else {}
        where = [(k, row[k]) for k in _WHERE if row[k] is not None]
        rows.append({**row, "firstSeen": _when(row["firstSeen"]), "where": where, "evidence": _fields(evidence)})
    return rows


def _listed(ledger: pl.DataFrame, state: State) -> tuple[list[dict[str, Any]], int]:
    part = ledger.filter(pl.col("state") == state.value)
    rows = [
        {
            **r,
            "document": f"{r['userId'] or ''}/{r['documentId'] or ''}".strip("/"),
            "firstSeen": _when(r["firstSeen"]),
            "acknowledgedUntil": _when(r.get("acknowledgedUntil")),
        }
        for r in part.head(LISTED).iter_rows(named=True)
    ]
    return rows, part.height


def trend_svg(history: list[ReconcileSummary]) -> Markup | None:
    """Stacked bars of errors and warnings, one per report (the schedule writes one a night)."""
    if len(history) < 2:
        return None
    labels = [f"{run.startedAt:%m-%d}" for run in history]
    if len(set(labels)) < len(labels):  # more than one report a day: tell them apart
        labels = [f"{run.startedAt:%m-%d %H:%M}" for run in history]
    chart = pygal.StackedBar(
        width=900,
        height=260,
        js=[],  # no tooltip script: the report is a static document
        disable_xml_declaration=True,
        show_legend=True,
        legend_at_bottom=True,
        x_label_rotation=45,
        style=Style(
            colors=("#c62828", "#ef6c00"), background="white", plot_background="white", font_family="sans-serif"
        ),
        print_values=False,
    )
    chart.x_labels = labels
    top = max(run.totalFindings for run in history)
    step = max(1, -(-top // 5))  # counts are whole: five whole-number ticks, not 0.2 steps
    chart.y_labels = list(range(0, top + step, step))
    chart.add("errors", [run.severities.get("error", 0) for run in history])
    chart.add("warnings", [run.severities.get("warning", 0) for run in history])
    tree = chart.render_tree()
    for script in list(tree.iter("script")):  # pygal's tooltip config: a static report runs no script
        script.getparent().remove(script)
    return Markup(etree.tostring(tree, encoding="unicode"))  # pygal escapes its labels; they hold no user text


def render_html(
    summary: ReconcileSummary,
    findings: pl.DataFrame,
    ledger: pl.DataFrame,
    history: list[ReconcileSummary],
) -> bytes:
    """The report page; `findings` carry their `findingId` (ledger.with_ids)."""
    previous = history[-1] if history else None
    users, user_total = per_user(ledger)
    acknowledged, _ = _listed(ledger, State.ACKNOWLEDGED)
    resolved, resolved_total = _listed(ledger, State.RESOLVED)
    unchecked, unchecked_total = _listed(ledger, State.UNCHECKED)
    recent = [*history, summary][-TREND_REPORTS:]
    page = _ENV.get_template("report.html.j2").render(
        s=summary,
        verdict=verdict(summary, previous),
        scope=scope(summary),
        codes=per_code(ledger),
        trend={"nights": len(recent), "svg": trend_svg(recent)},
        users=users,
        user_total=user_total,
        shown=top_findings(ledger, findings),
        acknowledged=acknowledged,
        resolved=resolved,
        resolved_total=resolved_total,
        unchecked=unchecked,
        unchecked_total=unchecked_total,
        provenance=sorted((k, str(v)) for k, v in summary.provenance.items()),
    )
    return page.encode()


def render_pdf(page: bytes) -> bytes:
    """The same report as a PDF (WeasyPrint: imported here, it loads pango when first used)."""
    from weasyprint import HTML  # type: ignore[import-untyped]  # no type hints shipped

    pdf = HTML(string=page.decode()).write_pdf()
    assert pdf is not None  # write_pdf returns the bytes when given no target
    return bytes(pdf)
