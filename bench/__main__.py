"""`make bench`: every benchmark in turn, each in its own process (clean peak-memory figures).

Each prints its own table and writes bench/results/<name>.json; ratios are against baselines
measured in the same run, so they hold on a busy machine where absolute rates do not. One
summary table of the headline figures comes last.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bench import summary

BENCHMARKS = (
    "bench_extract",
    "bench_ingest",
    "bench_requests",
    "bench_run_metrics",
    "bench_reconcile",
    "bench_ocr",
    "bench_visual",
    "bench_drill",
    "bench_audit",
)


def main(argv: list[str]) -> int:
    chosen = argv or list(BENCHMARKS)
    failed = []
    for name in chosen:
        if not (Path(__file__).parent / f"{name}.py").exists():
            print(f"skipping {name}: not present")
            continue
        print(f"\n##### {name}", flush=True)
        if subprocess.run([sys.executable, "-m", f"bench.{name}"], check=False).returncode != 0:
            failed.append(name)
    summary.main()
    if failed:
        print(f"\nfailed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
