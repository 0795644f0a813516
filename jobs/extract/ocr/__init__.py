"""OCR and text-layer extraction for plain PDFs and scans (text layer, tesseract, Amazon Textract).

Every engine produces an AnalyzeExpense-shaped response read by jobs.extract.textract:
textlayer.py / tesseract.py (+ images.py) → lines.py → labels.py → expense_shape.py, routed by
engine.py. textract_client.py is the AWS side, called by the ingest, never by extract_document.
"""
