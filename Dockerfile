# The DocuFlow batch-job image: `python -m jobs <command>` (ingest, reconcile, ...).
# It runs every OCR engine the stack can select (docuflow:ocrEngine): textract is an AWS API,
# local is Debian's tesseract with the French, German and English data jobs/extract/ocr/tesseract.py asks for.
# Non-root on a read-only root filesystem: ECS mounts a scratch volume at /tmp (the task
# definition's SCRATCH_PATH), which is TMPDIR for tesseract, pytesseract and polars' spills.
# `make image` checks this file without a Docker daemon and builds it where one runs.
FROM python:3.11.14-slim-bookworm

ENV PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    TMPDIR=/tmp \
    HOME=/tmp

WORKDIR /app

# The local OCR engine, and pango with one font for WeasyPrint (the reconcile report's PDF);
# no recommends, no package lists left in the layer.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        tesseract-ocr tesseract-ocr-eng tesseract-ocr-deu tesseract-ocr-fra \
        libpango-1.0-0 libpangoft2-1.0-0 libharfbuzz-subset0 fonts-dejavu-core \
 && rm -rf /var/lib/apt/lists/*

# Dependencies first so code changes reuse the layer; only the jobs' runtime requirements.
COPY requirements-jobs.txt ./
RUN pip install --no-cache-dir -r requirements-jobs.txt

# Fixed ids: the task definition runs as "10001:10001", so ECS can see it is not root.
RUN groupadd --system --gid 10001 docuflow \
 && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin docuflow

# Code owned by root and compiled now: the runtime user can neither change it nor needs to
# write .pyc files to the read-only root filesystem. /tmp stays world-writable (sticky) because
# ECS copies the image's /tmp permissions onto the scratch volume mounted there. `jobs/` arrives
# without the dev stack (jobs/local, jobs/demo): .dockerignore keeps them out of the context.
COPY jobs/ ./jobs/
RUN python -m compileall -q jobs && chmod 1777 /tmp

USER 10001:10001
ENTRYPOINT ["python", "-m", "jobs"]
CMD ["--help"]
