"""The work the dashboard's worker process runs for the pages (`python -m tempo_eval job run`,
`tempo_eval.cli.job`): reading what was uploaded on a page (`uploads`). The engine owns it; the
dashboard (`tempo_eval_app.worker_jobs`) only queues the jobs and shows how they went."""
