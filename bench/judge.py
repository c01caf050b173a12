"""Benchmark: LLMVerifier with concurrent judge calls against one call at a time, same run.

    /work/venv/bin/python bench/judge.py [--claims 500] [--latency 0.1] [--concurrency 32]

A scripted OpenAI-compatible server on 127.0.0.1 (tests/support/openai_server.py), in its own
process like a remote judge, answers every verification after `latency` seconds. The same
LLMVerifier code runs twice over the same claims through the real OpenAIProvider: with
`max_concurrency=concurrency` and with `max_concurrency=1` (the sequential reference). Prints both
wall times and the speed-up; the target is >= 10x. Loopback only, bounded: about
claims × latency seconds for the reference.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import multiprocessing.connection
import socketserver
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tempo_eval.llm.provider import OpenAIProvider  # noqa: E402
from tempo_eval.verify.base import Verdict  # noqa: E402
from tempo_eval.verify.llm import LLMVerifier  # noqa: E402
from tests.support.openai_server import ScriptedOpenAIServer, json_reply  # noqa: E402

PREMISES = ["Paris is the capital of France. The Eiffel Tower was completed in 1889."]
TARGET = 10.0


def serve(latency: float, connection: multiprocessing.connection.Connection) -> None:
    """The judge process: answer every request after `latency` seconds until told to stop."""
    # http.server writes the headers and the body as two TCP segments; with Nagle's algorithm and
    # delayed ACKs that adds ~40 ms to every loopback response, which a real server does not do.
    socketserver.StreamRequestHandler.disable_nagle_algorithm = True
    reply = json_reply({"verdict": "NEUTRAL", "evidence": "", "reason": "scripted"}, delay=latency)
    with ScriptedOpenAIServer(lambda request: reply) as server:
        connection.send(server.base_url)
        connection.recv()


def run(base_url: str, claims: list[str], concurrency: int) -> float:
    provider = OpenAIProvider("bench-judge", base_url=base_url, api_key="bench", max_concurrency=concurrency)
    verifier = LLMVerifier(provider)
    start = time.perf_counter()
    verdicts = asyncio.run(verifier.averify(claims, PREMISES))
    elapsed = time.perf_counter() - start
    errors = [v for v in verdicts if v.verdict == Verdict.ERROR]
    if len(verdicts) != len(claims) or errors:
        raise SystemExit(f"benchmark run failed: {len(errors)} errors, first: {errors[0].error if errors else None}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=int, default=500)
    parser.add_argument("--latency", type=float, default=0.1, help="seconds the judge takes per call")
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()

    claims = [f"Claim {i}: the Eiffel Tower was completed in {1800 + i % 200}." for i in range(args.claims)]
    context = multiprocessing.get_context("spawn")
    ours, theirs = context.Pipe()
    judge = context.Process(target=serve, args=(args.latency, theirs), daemon=True)
    judge.start()
    try:
        base_url = ours.recv()
        run(base_url, claims[:4], args.concurrency)  # warm-up: import openai, open connections
        concurrent = run(base_url, claims, args.concurrency)
        sequential = run(base_url, claims, 1)
    finally:
        ours.send("stop")
        judge.join(timeout=10)

    speedup = sequential / concurrent
    print(f"claims: {args.claims}, judge latency: {args.latency * 1000:.0f} ms, loopback server")
    print(f"LLMVerifier, max_concurrency={args.concurrency}: {concurrent:7.2f} s  ({args.claims / concurrent:7.1f} claims/s)")
    print(f"LLMVerifier, max_concurrency=1 (sequential):  {sequential:7.2f} s  ({args.claims / sequential:7.1f} claims/s)")
    print(f"speed-up: {speedup:.1f}x (target >= {TARGET:.0f}x: {'met' if speedup >= TARGET else 'NOT met'})")
    return 0 if speedup >= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
