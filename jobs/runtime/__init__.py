"""The job runtime: what a job declares, and the one context every job runs in (docs/runtime.md).

- `registry`: what a job declares (JobSpec, with the ECS tasks it runs as: command, policy
  builder, size, schedule, container hooks); each package's `job.py` declares its own and
  `jobs.registry` lists them, read by `jobs/__main__.py` and `components/batch_jobs.py`.
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

This package's own module imports nothing: the Pulumi program reads `registry` without loading
the run context, its observability or the store. Import each name from its module.

A job's CLI declares its command line once and runs it (the reconcile's, for instance):

    CLI = Cli("reconcile", parser, plan_of, _run)   # argparse parser, args -> plan (ValueError: none), run

    def main(argv: list[str]) -> int:
        return run_job(CLI, argv)                  # --help 0; a refusal 2, one line; else the run's code

    def _run(context: RunContext, plan: Plan) -> int:
        run = ReconcileRun(context.settings, plan, context=context)   # adapters: context.table(), .buckets
        outcome = run.execute()                    # stops on SIGTERM/SIGINT through context.stop
        return outcome.exit_code                   # domain errors need no except: run_job maps them
"""
