#!/usr/bin/env python3
"""Issue 33's headline: the 2-layer GPT-2 medium training problem at 2 GB per
device on 2x4 is proven optimal at 6,576,077 ns (HiGHS's optimum), by the
Pareto elimination, with Z3's unsat as the trace's last step.

The issue stated 6,735,177 ns, the optimum of the same command before the
loss head became part of every training graph (issue 30). With the head the
Megatron-style plans no longer gather the logits outside the plan, and the
optimum is 6,576,077: HiGHS (`bench/highs_milp.py` on the run's
`--export-problem`) proves it in 44.8 s, 2026-11-27.

Runs `synth gpt2 --preset medium --layers 2 --mesh 2x4 --mode training
--memory 2000000000` with a trace and checks the trace: a step with source
"elimination" finds 6,576,077, the last step is Z3's unsat below it, and the
run says "proven optimal". Exits 1 with the reason otherwise.

Usage: elimination_headline_check.py SYNTH_BIN WORK_DIR
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

OPTIMUM = 6576077
# Seconds the run gets: it needs about 6 s of CPU; the slack is for a loaded machine.
SECONDS = 600


def main(argv: list[str]) -> int:
    synth, work = argv
    os.makedirs(work, exist_ok=True)
    trace = os.path.join(work, "headline.jsonl")
    done = subprocess.run([synth, "gpt2", "--preset", "medium", "--layers", "2", "--mesh", "2x4", "--mode", "training",
                           "--memory", "2000000000", "--time-limit", str(SECONDS), "--trace", trace],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        print(f"elimination_headline_check: synth exited {done.returncode}: {done.stderr.strip()[-500:]}")
        return 1
    with open(trace, encoding="utf-8") as f:
        steps = [json.loads(line) for line in f][1:]
    found = [s for s in steps if s["source"] == "elimination" and s["status"] == "sat"]
    errors = []
    if not found or found[-1]["cost"] != OPTIMUM:
        errors.append(f"no elimination step found {OPTIMUM}: {[(s['source'], s['status']) for s in steps]}")
    last = steps[-1] if steps else {}
    if (last.get("source"), last.get("status"), last.get("bound")) != ("z3", "unsat", OPTIMUM):
        errors.append(f"the last step is not Z3's unsat below {OPTIMUM}: {last}")
    if "proven optimal" not in done.stderr:
        errors.append("the run does not say proven optimal")
    for e in errors:
        print(f"elimination_headline_check: {e}")
    if not errors:
        print(f"elimination_headline_check: proven optimal at {OPTIMUM} in {len(steps)} steps")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
