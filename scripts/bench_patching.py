#!/usr/bin/env python3
"""Times `attnlab model --patch` (activation patching of every head and of the residual at every
position) on the GPT-2-small-shaped checkpoint of bench_model.py (12 layers x 768, 12 heads,
vocab 50257; random weights), 32 tokens. Not a test: a measurement.

    python3 scripts/bench_patching.py [--attnlab build/release/app/attnlab] [--threads 2]

Two corrupted prompts: one differs from the clean prompt in its last token only (each patched
run reuses the corrupted run's cache of the 31 shared positions), one in its first token (no
prefix to reuse: every patched run is a full forward). Prints the patched runs, the positions
read from the cache and the seconds each took, as the command reports them.
"""

import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_model import write_checkpoint  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--attnlab", default="build/release/app/attnlab")
    parser.add_argument("--dir", default="/tmp/attnlab-gpt2-small")
    parser.add_argument("--tokens", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    write_checkpoint(args.dir)
    clean = [(i * 7919) % 50000 + 11 for i in range(args.tokens)]
    cases = {"last token differs": clean[:-1] + [clean[-1] + 1],
             "first token differs": [clean[0] + 1] + clean[1:]}
    for name, corrupted in cases.items():
        run = subprocess.run(
            [args.attnlab, "model", "--model", args.dir, "--ids", ",".join(map(str, clean)),
             "--patch", ",".join(map(str, corrupted)), "--metric", "logit-diff:5,6", "--json",
             "--threads", str(args.threads)],
            capture_output=True, text=True, check=True)
        patch = json.loads(run.stdout)["patch"]
        print(f"{name}: {patch['runs']} patched runs ({len(patch['heads']) * len(patch['heads'][0])}"
              f" heads), {patch['reused_positions']} positions from the cache, "
              f"{patch['seconds']:.2f} s")


if __name__ == "__main__":
    main()
