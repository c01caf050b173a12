"""Running an evaluation: score one row (`scoring`), the local engine with its batching and resume
(`runner`, `run_tasks`), the local worker processes (`pool`) and the Ray engine (`distributed/`)."""
