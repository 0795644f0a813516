# DocuFlow developer entry points. Every target installs what it needs first (idempotent).
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
.DEFAULT_GOAL := help

VENV := .venv
PY := $(VENV)/bin/python
PIP_QUIET := --quiet --progress-bar off --disable-pip-version-check
# pip here warns about every local index folder it skips; keep the output readable.
PIP_FILTER := grep -v "^WARNING: Location" || true

.PHONY: help setup java ocr browser pdf demo test test-slow bench lint image local-up local-down clean

help:
	@echo "make demo       local stack up, seed demo invoices, ingest, reconcile, dashboard queries"
	@echo "make test       install everything, start fresh local servers, run the test suite"
	@echo "make test-slow  the full reliability suite (crash seeds, outages)"
	@echo "make bench      benchmarks (results in bench/results/)"
	@echo "make lint       ruff check (ruff.toml's rule set), ruff format --check, mypy --strict (mypy.ini), lint-imports (.importlinter)"
	@echo "make image      check the job image's Dockerfile; docker build it where a daemon runs"
	@echo "make local-up / local-down   the embedded stack for your own shell"

$(VENV)/.installed: requirements.txt requirements-jobs.txt requirements-dev.txt
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install $(PIP_QUIET) -r requirements-dev.txt 2>&1 | $(PIP_FILTER)
	$(PY) -c "import boto3, moto, pydantic, polars, pulumi, pytest"
	touch $@

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

# DynamoDB Local needs Java >= 17; install Debian's headless JRE when the machine has none.
java:
	@if ! java -version 2>&1 | grep -Eq 'version "(1[7-9]|[2-9][0-9])'; then \
		echo "installing a headless JRE (DynamoDB Local needs Java >= 17)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jre-headless >/dev/null; \
	fi

# Local OCR engine for scans (French, German and English models).
ocr:
	@if ! command -v tesseract >/dev/null || ! tesseract --list-langs 2>/dev/null | grep -qx fra; then \
		echo "installing tesseract-ocr (eng, deu, fra)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tesseract-ocr tesseract-ocr-eng tesseract-ocr-deu tesseract-ocr-fra >/dev/null; \
	fi

# A headless browser for the test that reads a presigned result.json under the bucket's CORS rules.
browser:
	@if ! command -v chromium >/dev/null; then \
		echo "installing chromium (headless browser for the CORS test)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	fi

# WeasyPrint (the reconcile report's PDF) draws with pango; Debian's libraries and one font.
pdf:
	@if ! ldconfig -p | grep -q libpangoft2-1.0.so.0 || ! ldconfig -p | grep -q libharfbuzz-subset.so.0; then \
		echo "installing pango (WeasyPrint renders the report's PDF with it)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libpango-1.0-0 libpangoft2-1.0-0 libharfbuzz-subset0 fonts-dejavu-core >/dev/null; \
	fi

setup: $(VENV)/.installed node_modules/.installed java ocr browser pdf

# The suite runs on TEST_WORKERS pytest-xdist workers: one more than the cores, at most 4 (each
# worker starts its own DynamoDB Local and moto server, ~1 GB). Tests wait on the servers and on
# the jobs they start, so a third worker on 2 cores fills that time (measured on 2 cores: 2
# workers 13.8 min at 157 % CPU, 3 workers 11.4 min at 180 %, 4 workers 11.5 min at 188 %); work
# stealing evens out the few long tests. TEST_WORKERS=0 runs it in one process.
TEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); echo $$(( n + 1 < 4 ? n + 1 : 4 )))
PYTEST_PARALLEL := $(if $(filter 0,$(TEST_WORKERS)),-p no:xdist,-n $(TEST_WORKERS) --dist worksteal)

test: setup
	$(PY) -m pytest -m "not slow" -q $(PYTEST_PARALLEL)

test-slow: setup
	$(PY) -m pytest -q $(PYTEST_PARALLEL)

bench: setup
	$(PY) -m bench

lint: $(VENV)/.installed
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy
	$(VENV)/bin/lint-imports --no-cache

# The job image: the daemonless checks (engines, pinned base, non-root, TMPDIR on the scratch
# volume) always; where a Docker daemon answers, the real build and a run as ECS runs it
# (read-only root, /tmp a tmpfs, the numeric user) that lists tesseract's languages.
IMAGE ?= docuflow-jobs:dev
image: $(VENV)/.installed
	$(PY) -m pytest -q -p no:cacheprovider tests/components/test_image.py
	@if docker info >/dev/null 2>&1; then \
		docker build -t $(IMAGE) . && \
		docker run --rm --read-only --tmpfs /tmp --user 10001:10001 --entrypoint tesseract $(IMAGE) --list-langs && \
		docker run --rm --read-only --tmpfs /tmp --user 10001:10001 $(IMAGE) --help >/dev/null && \
		echo "built and ran $(IMAGE)"; \
	else \
		echo "no Docker daemon here: the Dockerfile was checked, not built"; \
	fi

demo: setup
	$(PY) -m jobs.demo.run

local-up: setup
	@$(PY) -m jobs local up

local-down:
	@$(PY) -m jobs local down

clean: local-down
	rm -rf .local
