"""The job runtime: one definition of each job, one context every job runs in (docs/runtime.md).

- `registry`: JOBS, one JobSpec per `python -m jobs <command>` (CLI module, subcommands, image,
  metrics) with the ECS tasks it runs as (command, policy builder by name, size, schedule);
  `jobs/__main__.py` and `components/batch_jobs.py` both read it.
- `context`: RunContext (settings, one run id, call metrics, the stop flag, the metrics it
  publishes once at the end, the adapters it builds), `Cli` (a job's parser, plan and run) and
  `run_job(cli, argv)`, which parses, refuses bad input one way and maps the run's outcome to the
  one exit-code map (jobs.errors.ExitCode); `run_in_context(job, body)` is its second half.
- `run_metrics`: the one emitter of a run's CloudWatch metrics (one PutMetricData at its end),
  which the context calls; the only module here that reaches the store at import.
- `signals`: StopFlag, the stop on SIGTERM/SIGINT; `ids`: new_run_id; `cli`: the shared CLI style
  (subcommands for modes, duration and time types); `stores`: the AWS adapters built one way
  (document_table, buckets; imported by the jobs that reach AWS, so the registry's readers load no
  boto3).

A job's CLI declares its command line once and runs it (the reconcile's, for instance):

    CLI = Cli("reconcile", parser, plan_of, _run)   # argparse parser, args -> plan (ValueError: none), run

    def main(argv: list[str]) -> int:
        return run_job(CLI, argv)                  # --help 0; a refusal 2, one line; else the run's code

    def _run(context: RunContext, plan: Plan) -> int:
        run = ReconcileRun(context.settings, plan, context=context)   # adapters: context.table(), .buckets
        outcome = run.execute()                    # stops on SIGTERM/SIGINT through context.stop
        return outcome.exit_code                   # domain errors need no except: run_job maps them
"""

from __future__ import annotations

from jobs.runtime.cli import duration, point_in_time
from jobs.runtime.context import Body, Cli, RunContext, one_line, report_error, run_in_context, run_job
from jobs.runtime.ids import new_run_id
from jobs.runtime.registry import JOBS, JobSpec, Schedule, TaskSize, TaskSpec, job, tasks
from jobs.runtime.signals import STOP_SIGNALS, StopFlag

__all__ = [
    "JOBS",
    "STOP_SIGNALS",
    "Body",
    "Cli",
    "JobSpec",
    "RunContext",
    "Schedule",
    "StopFlag",
    "TaskSize",
    "TaskSpec",
    "duration",
    "job",
    "new_run_id",
    "one_line",
    "point_in_time",
    "report_error",
    "run_in_context",
    "run_job",
    "tasks",
]
