"""The job runtime: what a job declares, and the one context every job runs in (docs/runtime.md).

- `registry`: what a job declares (JobSpec, with the ECS tasks it runs as: command, policy
  builder, size, schedule, container hooks); each package's `job.py` declares its own and
  `jobs.registry` lists them, read by `jobs/__main__.py` and `components/batch_jobs.py`.
- `context`: RunContext (settings, one run id, call metrics, the stop flag, the metrics it
  publishes once at the end) and `run_job(name, body)`, which maps the body's outcome to the one
  exit-code map (jobs.errors.ExitCode).
- `run_metrics`: the one emitter of a run's CloudWatch metrics (one PutMetricData at its end),
  which the context calls; the only module here that reaches the store at import.
- `signals`: StopFlag, the stop on SIGTERM/SIGINT; `ids`: new_run_id; `cli`: the shared CLI style
  (subcommands for modes, old flags as deprecated aliases, duration and time types);
  `stores`: the AWS adapters built one way (document_table; imported by the jobs that reach AWS,
  so the registry's readers load no boto3).

This package's own module imports nothing: the Pulumi program reads `registry` without loading
the run context, its observability or the store. Import each name from its module.

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
