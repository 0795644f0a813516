"""The audit report a reconcile run writes once: its files (`written`), the view an auditor reads
(`view` + `templates/`: HTML and PDF), its provenance and signature (`provenance`), the notice that
it landed (`notice`) and the CSV a person opens (`spreadsheet_csv`).

This is the front `jobs.reports` (verify, pack) and `jobs.recovery` read reports through.
"""

from __future__ import annotations

from jobs.reconcile.report.provenance import SIGNATURE_FILE, Signature, sign, signature_holds
from jobs.reconcile.report.spreadsheet_csv import spreadsheet_csv
from jobs.reconcile.report.written import SUMMARY_FILE
from jobs.reconcile.summary import ReconcileSummary

__all__ = [
    "SIGNATURE_FILE",
    "SUMMARY_FILE",
    "ReconcileSummary",
    "Signature",
    "sign",
    "signature_holds",
    "spreadsheet_csv",
]
