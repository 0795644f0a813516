"""The job runtime: one definition of each job, one context every job runs in (docs/runtime.md).

- `registry`: JOBS, one JobSpec per `python -m jobs <command>` (CLI module, subcommands, image,
  metrics) with the ECS tasks it runs as (command, policy builder by name, size, schedule);
  `jobs/__main__.py` and `components/batch_jobs.py` both read it.
- `context`: RunContext (settings, one run id, call metrics, the stop flag, the metrics it
  publishes once at the end) and `run_job(name, body)`, which maps the body's outcome to the one
  exit-code map (jobs.errors.ExitCode).
- `run_metrics`: the one emitter of a run's CloudWatch metrics (one PutMetricData at its end),
  which the context calls; the only module here that reaches the store at import.
- `signals`: StopFlag, the stop on SIGTERM/SIGINT; `ids`: new_run_id; `cli`: the shared CLI style
  (subcommands for modes, old flags as deprecated aliases, duration and time types);
  `stores`: the AWS adapters built one way (document_table; imported by the jobs that reach AWS,
  so the registry's readers load no boto3).

A job's CLI adopts it in three lines (the reconcile's, for instance):

    def main(argv: list[str]) -> int:
        args = parser().parse_args(argv)           # argparse exits 0 on --help, 2 on bad options
        return run_job("reconcile", lambda context: _run(context, args))

    def _run(context: RunContext, args: argparse.Namespace) -> int:
        run = ReconcileRun(context.settings, options_of(args), run_id=context.run_id, metrics=context.calls)
        context.stop.on_stop(run.stop)             # or context.stop.check() where stopping is clean
        outcome = run.execute()
        context.publish(metrics_of(outcome.summary))   # published once, when the run ends
        return outcome.exit_code                   # domain errors need no except: run_job maps them
"""

from __future__ import annotations

from jobs.runtime.cli import deprecated, duration, point_in_time, with_mode
from jobs.runtime.context import Body, RunContext, report_error, run_job
from jobs.runtime.ids import new_run_id
from jobs.runtime.registry import JOBS, JobSpec, Schedule, TaskSize, TaskSpec, job, tasks
from jobs.runtime.signals import STOP_SIGNALS, StopFlag

__all__ = [
    "JOBS",
    "STOP_SIGNALS",
    "Body",
    "JobSpec",
    "RunContext",
    "Schedule",
    "StopFlag",
    "TaskSize",
    "TaskSpec",
    "deprecated",
    "duration",
    "job",
    "new_run_id",
    "point_in_time",
    "report_error",
    "run_job",
    "tasks",
    "with_mode",
]
