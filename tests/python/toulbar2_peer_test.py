#!/usr/bin/env python3
"""Checks bench/toulbar2_peer.py (the toulbar2 peer, bench/devset/README.md): on
generated problems of 50 and 200 nodes with a tight limit and a 5-s limit,
it prints a falling series of `t=<s> cost=<int>` lines and `best <cost>` at
the last one, keeps to the wall-clock limit (plus 1 s), and its plan is
feasible at that cost by `synth --iopddl FILE --verify PLAN`. The 50-node one
runs the default search (the knapsack rows prove it), the 200-node one the
Lagrangian rounds and the neighbourhood search (--memory lagrangian).

usage: toulbar2_peer_test.py REPO_ROOT SYNTH"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time

LIMIT = 5.0
CASES = [  # (generator seed, nodes, limit factor, extra peer arguments)
    (5, 50, 1.03, []),
    (7, 200, 1.03, ["--memory", "lagrangian"]),
]


def check(root: str, synth: str, tmp: str, seed: int, nodes: int, factor: float, extra: list[str]) -> list[str]:
    name = f"{nodes} nodes, seed {seed}"
    problem = os.path.join(tmp, f"p{seed}-{nodes}.json")
    plan = os.path.join(tmp, f"p{seed}-{nodes}.plan")
    subprocess.run([sys.executable, os.path.join(root, "bench", "devset", "generate.py"), "--seed", str(seed),
                    "--nodes", str(nodes), "--limit-factor", str(factor), problem], check=True)
    began = time.monotonic()
    run = subprocess.run([sys.executable, os.path.join(root, "bench", "toulbar2_peer.py"), problem,
                          "--time-limit", str(LIMIT), "--solution", plan, *extra],
                         capture_output=True, text=True, timeout=60)
    wall = time.monotonic() - began
    if run.returncode != 0:
        return [f"{name}: exit {run.returncode}: {run.stderr.strip()[-2000:]}"]
    failures = []
    if wall > LIMIT + 1.0:
        failures.append(f"{name}: took {wall:.2f} s for a {LIMIT} s limit")
    lines = run.stdout.strip().splitlines()
    progress = [int(m.group(1)) for line in lines[:-1] if (m := re.fullmatch(r"t=\d+\.\d+ cost=(\d+)", line))]
    if len(progress) != len(lines) - 1 or not progress:
        failures.append(f"{name}: expected t=... cost=... lines, then best: {lines}")
    if any(b >= a for a, b in zip(progress, progress[1:])):
        failures.append(f"{name}: the costs do not fall: {progress}")
    best = re.fullmatch(r"best (\d+)", lines[-1]) if lines else None
    if best is None:
        return failures + [f"{name}: the last line is not 'best <cost>': {lines[-1:]}"]
    cost = int(best.group(1))
    if progress and progress[-1] != cost:
        failures.append(f"{name}: best {cost} but the last progress line says {progress[-1]}")
    verify = subprocess.run([synth, "--iopddl", problem, "--verify", plan], capture_output=True, text=True)
    if verify.returncode != 0 or f"feasible, cost {cost}" not in verify.stdout:
        failures.append(f"{name}: synth --verify: {verify.stdout.strip()} {verify.stderr.strip()} (peer: {cost})")
    return failures


def check_bad_input(root: str, tmp: str) -> list[str]:
    """A missing, malformed or incomplete problem file: exit 2 and one line on stderr, no traceback."""
    malformed = os.path.join(tmp, "malformed.json")
    with open(malformed, "w") as f:
        f.write("not json\n")
    incomplete = os.path.join(tmp, "incomplete.json")
    with open(incomplete, "w") as f:
        f.write('{"problem": {"nodes": 3}}\n')
    failures = []
    for path in (os.path.join(tmp, "missing.json"), malformed, incomplete):
        run = subprocess.run([sys.executable, os.path.join(root, "bench", "toulbar2_peer.py"), path,
                              "--time-limit", "1"], capture_output=True, text=True, timeout=60)
        lines = run.stderr.strip().splitlines()
        if run.returncode != 2 or len(lines) != 1 or path not in lines[0] or run.stdout:
            failures.append(f"{path}: exit {run.returncode}, stderr {lines}, stdout {run.stdout!r}")
    return failures


def main() -> int:
    root, synth = sys.argv[1], sys.argv[2]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for seed, nodes, factor, extra in CASES:
            failures += check(root, synth, tmp, seed, nodes, factor, extra)
        failures += check_bad_input(root, tmp)
    for failure in failures:
        print(f"toulbar2_peer_test: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
