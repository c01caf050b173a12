"""Benchmark the NLI verifier on a DeBERTa-v3-base-shaped checkpoint with random weights.

Speed does not depend on the weights, so the checkpoint is built locally (the encoder has the real
base shape: hidden 768, 12 layers, 12 heads, intermediate 3072, relative attention with 256
buckets; the tokenizer is a small locally trained one). It measures:

(a) end-to-end `NLIVerifier.verify` against the raw model forward on exactly the same
    (premise, claim) pairs: same sorting, same batches, padded to the longest, tokenised
    beforehand for the raw side. Target: our overhead under 10%.
(b) pairs per claim with embedding candidate selection vs exhaustive, on 20 claims against 5
    contexts of 8 sentences each.
(c) a re-run through `CachedVerifier`: speed-up over the first run. Target: >= 100x.

Run from the repo root: `/work/venv/bin/python bench/nli.py` (about 3-5 minutes on 2 CPU cores).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

REPEATS = 4

CONTEXTS = [
    "The Eiffel Tower was designed by the engineering firm of Gustave Eiffel. Construction began in 1887. "
    "The tower was completed in 1889 for the World's Fair. It is 330 metres tall. "
    "It was the tallest structure in the world until 1930. The tower is repainted every seven years. "
    "About seven million people visit it each year. It is the most visited paid monument in the world.",
    "World War II began in 1939 when Germany invaded Poland. The United States entered the war in 1941. "
    "The war in Europe ended in May 1945. Japan surrendered in September 1945. "
    "About 70 million people died in the war. The United Nations was founded in 1945. "
    "The Nuremberg trials were held from 1945 to 1946. The Marshall Plan began in 1948.",
    "Apollo 11 was launched on 16 July 1969. Neil Armstrong and Buzz Aldrin landed on the Moon four days later. "
    "Michael Collins stayed in lunar orbit. The astronauts returned to Earth on 24 July 1969. "
    "About 650 million people watched the landing on television. The mission collected 21 kilograms of samples. "
    "Apollo 17 was the last crewed Moon mission, in 1972. No one has walked on the Moon since then.",
    "The company was founded in 1998 by two students at Stanford. It went public in 2004. "
    "Its headquarters are in Mountain View. It employs more than 180,000 people. "
    "Revenue reached 300 billion dollars in 2023. The company reorganised under a holding company in 2015. "
    "It acquired a video platform in 2006 for 1.65 billion dollars. It launched a mobile operating system in 2008.",
    "The Hobbit was written by J. R. R. Tolkien and published in 1937. It was followed by The Lord of the Rings. "
    "The Lord of the Rings was published in three volumes in 1954 and 1955. Tolkien taught at Oxford for decades. "
    "He was born in 1892 in South Africa. He died in 1973. "
    "The books have sold more than 150 million copies. Film adaptations were released from 2001 to 2014.",
]
CLAIMS = [
    "The Eiffel Tower was completed in 1889.",
    "The Eiffel Tower is 300 metres tall.",
    "Construction of the tower began in 1887.",
    "The Eiffel Tower is visited by seven million people a year.",
    "World War II began in 1939.",
    "The United States entered the war in 1943.",
    "Japan surrendered in 1945.",
    "The United Nations was founded after the war.",
    "Apollo 11 landed on the Moon in 1969.",
    "Michael Collins walked on the Moon.",
    "About 650 million people watched the landing.",
    "Apollo 17 was the last crewed Moon mission.",
    "The company was founded in 1998.",
    "The company went public in 2006.",
    "The company employs more than 180,000 people.",
    "The company is headquartered in Mountain View.",
    "The Hobbit was published in 1937.",
    "Tolkien was born in England.",
    "The Lord of the Rings was published in 1954 and 1955.",
    "Tolkien died in 1973.",
]


def build_base_checkpoint(path: Path) -> Path:
    from tests.support.tiny_nli import build_tiny_nli

    return build_tiny_nli(
        path,
        hidden_size=768,
        num_hidden_layers=12,
        num_attention_heads=12,
        intermediate_size=3072,
        max_position_embeddings=512,
    )


class Timer:
    """Wall-clock and process-CPU seconds of a block (CPU time is steadier on a shared machine)."""

    def __enter__(self) -> Timer:
        self._wall, self._cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.times = (time.perf_counter() - self._wall, time.process_time() - self._cpu)


def raw_forward(verifier, pairs: list[tuple[str, str]], batch_size: int) -> tuple[float, float]:
    """(wall, CPU) seconds for the bare model on `pairs`: tokenised beforehand, same sort, batches, padding."""
    import torch

    tokenizer, model = verifier.tokenizer, verifier.model
    encoded = tokenizer(
        [p for p, _ in pairs], [h for _, h in pairs],
        truncation="only_first", max_length=verifier.effective_max_length, padding=False,
    )
    features = [{key: encoded[key][i] for key in encoded} for i in range(len(pairs))]
    order = sorted(range(len(pairs)), key=lambda i: len(features[i]["input_ids"]))
    batches = [
        tokenizer.pad([features[i] for i in order[j : j + batch_size]], padding="longest", return_tensors="pt")
        for j in range(0, len(order), batch_size)
    ]
    with Timer() as timer, torch.inference_mode():
        for batch in batches:
            torch.softmax(model(**batch).logits, dim=-1)
    return timer.times


def main() -> None:
    import transformers

    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()

    from tempo_eval.store.verdict_cache import VerdictCache
    from tempo_eval.verify.cache import CachedVerifier
    from tempo_eval.verify.embeddings import default_embedder
    from tempo_eval.verify.nli import NLIVerifier

    batch_size, threads = 8, os.cpu_count() or 1
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        path = build_base_checkpoint(Path(tmp) / "deberta-v3-base-shaped")
        print(f"built DeBERTa-v3-base-shaped checkpoint in {time.perf_counter() - started:.1f} s")

        verifier = NLIVerifier(str(path), batch_size=batch_size, num_threads=threads)
        ok, message = verifier.check_available()
        assert ok, message
        params = sum(p.numel() for p in verifier.model.parameters()) / 1e6
        print(f"model: {params:.0f}M parameters, max length {verifier.effective_max_length}, {threads} threads")
        default_embedder().embed(["warm-up sentence for MiniLM, unrelated to the workload."])

        # (b) pairs per claim: embedding candidates vs exhaustive
        units = verifier.premise_units(CONTEXTS)
        chosen = verifier.candidate_indices(CLAIMS, units)
        embedding_pairs = sum(len(c) for c in chosen)
        exhaustive_pairs = len(CLAIMS) * len(units)
        print("\n(b) candidate selection, 20 claims x 5 contexts of 8 sentences")
        print(f"    premise sentences: {len(units)}")
        print(f"    embedding (top_k={verifier.top_k} + shared years): {embedding_pairs} pairs, "
              f"{embedding_pairs / len(CLAIMS):.1f} per claim")
        print(f"    exhaustive: {exhaustive_pairs} pairs, {exhaustive_pairs / len(CLAIMS):.1f} per claim")
        print(f"    ratio: {exhaustive_pairs / embedding_pairs:.1f}x fewer model pairs")

        # (a) verify end to end vs raw forward on the very same pairs
        seen: list[list[tuple[str, str]]] = []
        real_predict = verifier.predict

        def recording_predict(pairs, batch_size=None, show_progress_bar=False):
            seen.append(list(pairs))
            return real_predict(pairs, batch_size=batch_size, show_progress_bar=show_progress_bar)

        verifier.predict = recording_predict  # type: ignore[method-assign]
        # warm-up of both sides: the first forward of each batch shape is slower (kernel setup)
        verifier.verify(CLAIMS, CONTEXTS)
        raw_forward(verifier, seen[-1], batch_size)
        ours: list[tuple[float, float]] = []  # (wall, cpu) seconds
        predict_only: list[tuple[float, float]] = []
        raw: list[tuple[float, float]] = []
        for round_ in range(REPEATS):  # interleaved, order rotated: the machine is shared
            steps = ["verify", "predict", "raw"]
            steps = steps[round_ % 3 :] + steps[: round_ % 3]
            for step in steps:
                if step == "verify":
                    default_embedder().clear_cache()  # our side pays for its MiniLM embeddings every time
                    with Timer() as timer:
                        verdicts = verifier.verify(CLAIMS, CONTEXTS)
                    ours.append(timer.times)
                elif step == "predict":
                    with Timer() as timer:
                        real_predict(seen[-1])
                    predict_only.append(timer.times)
                else:
                    raw.append(raw_forward(verifier, seen[-1], batch_size))
        assert all(pairs == seen[0] for pairs in seen) and len(seen[0]) == embedding_pairs
        n_pairs = len(seen[0])
        print(f"\n(a) verify vs raw forward, {n_pairs} pairs, batch {batch_size}, {REPEATS} interleaved rounds")
        for label, runs in (("NLIVerifier.verify", ours), ("NLIVerifier.predict", predict_only), ("raw model forward", raw)):
            walls = ", ".join(f"{wall:.2f}" for wall, _ in runs)
            cpus = ", ".join(f"{cpu:.2f}" for _, cpu in runs)
            print(f"    {label:<20} wall {walls} s | process CPU {cpus} s")
        best = {name: min(runs) for name, runs in (("ours", ours), ("predict", predict_only), ("raw", raw))}
        print(f"    throughput (best wall): verify {len(CLAIMS) / best['ours'][0]:.2f} claims/s = "
              f"{n_pairs / best['ours'][0]:.2f} pairs/s; raw {n_pairs / best['raw'][0]:.2f} pairs/s")
        # best of n: on a shared machine the fastest run is the one least disturbed by others
        for label, index in (("wall clock", 0), ("process CPU", 1)):
            verify_ratio = min(t[index] for t in ours) / min(t[index] for t in raw)
            predict_ratio = min(t[index] for t in predict_only) / min(t[index] for t in raw)
            print(f"    overhead by {label} (best of {REPEATS} each): verify {100 * (verify_ratio - 1):+.1f}% "
                  f"(incl. MiniLM candidate selection), predict alone {100 * (predict_ratio - 1):+.1f}% "
                  "(target < 10%)")
        counts = {v.value: sum(x.verdict == v for x in verdicts) for v in {x.verdict for x in verdicts}}
        print(f"    verdicts (random weights, meaningless): {counts}")
        verifier.predict = real_predict  # type: ignore[method-assign]

        # (c) cached re-run
        cache = VerdictCache(Path(tmp) / "verdicts.sqlite")
        cached = CachedVerifier(verifier, cache)
        start = time.perf_counter()
        first = cached.verify(CLAIMS, CONTEXTS)
        cold = time.perf_counter() - start
        start = time.perf_counter()
        second = cached.verify(CLAIMS, CONTEXTS)
        warm = time.perf_counter() - start
        assert second == first and cached.stats.hits == len(CLAIMS)
        print("\n(c) CachedVerifier re-run")
        print(f"    first run {cold:.2f} s, re-run {1000 * warm:.1f} ms -> {cold / warm:.0f}x faster (target >= 100x)")
        print(f"\ntotal bench time {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
