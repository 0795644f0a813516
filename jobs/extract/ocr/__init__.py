"""OCR and text-layer extraction for plain PDFs and scans (text layer, tesseract, Amazon Textract).

Every engine produces an AnalyzeExpense-shaped response read by jobs.extract.textract:
textlayer.py / tesseract.py (+ images.py) → lines.py → labels.py → expense_shape.py, routed by
engine.py (the front: `extract_plain_pdf`, `extract_image`, which jobs.extract.api calls). Amazon
Textract itself is called by the ingest through jobs.store.textract, never by extract_document.
The other modules are public to the tests and benchmarks that measure them (`degrade`: the forms
and damage the OCR benchmark reads), not to other packages.
"""

__all__ = ["engine"]
