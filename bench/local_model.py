"""How fast the embedded local model is on this machine: load time, prompt and generation tok/s.

    python bench/local_model.py [--small] [--threads N] [--runs 3] [--context 8192]

Each figure is the median of `--runs` runs. Every run loads the engine
afresh (that is the load time) and sends one request with a ~600-token prompt
that the prompt cache cannot help with and 128 generated tokens; the speeds
are llama.cpp's own `timings` for that request, so HTTP and Python overhead
are not counted in them (the wall time of the request is printed too). The
engine is Baton's own (`baton.local.engine`), with the same parameters the
`local` provider uses. The load average is printed because on a shared
machine other work changes these figures more than anything else.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from baton.config import LocalSettings
from baton.local.engine import EngineConfig, available_cpus, default_threads, load_xllamacpp
from baton.local.model_files import DEFAULT_MODEL, QWEN_CODER_0_5B, looks_installed, model_path

PROMPT_WORDS = (
    "Baton keeps the agent's plan in a file and its exact facts in a ledger, so a compaction "
    "never loses them. "
)
GENERATE = 128


def _request(base_url: str, run: int) -> tuple[dict[str, Any], float]:
    # A different first line each run, so no run reuses another's prompt cache.
    text = f"Run {run}.\n" + PROMPT_WORDS * 28 + "\nWrite a long story about a conductor."
    body = {
        "messages": [{"role": "user", "content": text}],
        "max_tokens": GENERATE,
        "temperature": 0,
        "ignore_eos": True,  # always generate GENERATE tokens, however short the answer
        "cache_prompt": False,
    }
    req = urllib.request.Request(
        f"{base_url}/v1/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    began = time.monotonic()
    with urllib.request.urlopen(req, timeout=900) as response:
        data: dict[str, Any] = json.loads(response.read())
    return data, time.monotonic() - began


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="the 0.5B model instead of 1.5B")
    parser.add_argument("--model", type=Path, help="any GGUF file instead")
    parser.add_argument("--threads", type=int, default=default_threads(), help="generating")
    parser.add_argument(
        "--batch-threads", type=int, default=available_cpus(), help="reading the prompt"
    )
    parser.add_argument("--context", type=int, default=LocalSettings().context_size)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    spec = QWEN_CODER_0_5B if args.small else DEFAULT_MODEL
    path = args.model or model_path(spec)
    if not args.model and not looks_installed(path, spec):
        flag = " --small" if args.small else ""
        print(f"{spec.title} is not installed: run `baton model install{flag}`", file=sys.stderr)
        return 1
    config = EngineConfig(
        model_path=path,
        threads=args.threads,
        batch_threads=args.batch_threads,
        context_size=args.context,
    )
    print(
        f"model {path.name}, threads {args.threads} (prompt {args.batch_threads}), "
        f"context {args.context}, cpus {available_cpus()}"
    )

    loads, prompt_tps, gen_tps, walls = [], [], [], []
    prompt_tokens = 0
    for run in range(1, args.runs + 1):
        load1 = os.getloadavg()[0]
        began = time.monotonic()
        server = load_xllamacpp(config)
        loads.append(time.monotonic() - began)
        data, wall = _request(server.listening_address.rstrip("/"), run)
        del server  # stops the engine and frees the model; the next run loads it again
        timings = data["timings"]
        prompt_tokens = int(timings["prompt_n"])
        prompt_tps.append(float(timings["prompt_per_second"]))
        gen_tps.append(float(timings["predicted_per_second"]))
        walls.append(wall)
        print(
            f"run {run}: load {loads[-1]:.1f} s, prompt {prompt_tokens} tok at "
            f"{prompt_tps[-1]:.1f} tok/s, generation {timings['predicted_n']} tok at "
            f"{gen_tps[-1]:.1f} tok/s, request {wall:.1f} s (load average {load1:.2f})"
        )
    print(
        f"median of {args.runs}: load {statistics.median(loads):.1f} s, "
        f"prompt {statistics.median(prompt_tps):.1f} tok/s ({prompt_tokens} tokens), "
        f"generation {statistics.median(gen_tps):.1f} tok/s ({GENERATE} tokens), "
        f"request {statistics.median(walls):.1f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
