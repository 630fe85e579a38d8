#!/usr/bin/env python3
"""synth against HiGHS on small memory-bound training problems.

For each case (a model, a mesh and a budget as a fraction of the peak of the
plan synth finds without a budget), synth exports the problem
(--export-problem), `synth --iopddl` solves the export, and
bench/highs_milp.py solves the same file with HiGHS (scipy.optimize.milp).
Both must prove the same optimum; HiGHS's plan must score that cost in
`synth --iopddl --verify`. Prints one line per case and exits 1 on any
disagreement. Exits 0 with "highs_cross_check: SKIPPED" when the Python
running it has no scipy.

Usage: highs_cross_check.py SYNTH_BIN HIGHS_MILP_SCRIPT WORK_DIR [CASE ...]
(CASE: an index into CASES; all when none is given).
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass

# Seconds synth and HiGHS get per case; a case that is not proven within
# them fails. Both prove each case in seconds on an idle machine; the slack
# is for a loaded one (HiGHS took 116 s on case 4 at a load of 27 on 2 cores).
SOLVE_SECONDS = 240
HIGHS_SECONDS = 240


@dataclass(frozen=True)
class Case:
    """A model and mesh (synth arguments) under a budget, a fraction of the unbounded plan's peak."""

    model: tuple[str, ...]  # synth's model subcommand and its options, then --mesh
    fraction: float         # budget / peak of the plan found without a budget

    def label(self) -> str:
        return f"{' '.join(self.model)} at {round(100 * self.fraction)}%"


MLP_2X4 = ("mlp", "--mesh", "2x4")
MLP_8 = ("mlp", "--mesh", "8")
GPT2_1_2X4 = ("gpt2", "--layers", "1", "--mesh", "2x4")
GPT2_1_8 = ("gpt2", "--layers", "1", "--mesh", "8")
GPT2_2_2X4 = ("gpt2", "--layers", "2", "--mesh", "2x4")
GPT2_2_8 = ("gpt2", "--layers", "2", "--mesh", "8")
LLAMA_2X4 = ("llama", "--preset", "llama-3.2-1b", "--layers", "1", "--mesh", "2x4")
LLAMA_8 = ("llama", "--preset", "llama-3.2-1b", "--layers", "1", "--mesh", "8")

# 1 and 2 layers, budgets from 40% to 70%, both meshes, the three models.
# GPT-2 with 2 layers on 8 devices at 55%, once left out because synth did
# not prove it within a minute, is proven by the Pareto elimination in about
# a second (BENCHMARKS.md, issue 33). 2 layers on 2x4 at 55% stays out:
# there HiGHS does not prove it within a minute on a loaded machine.
CASES = [
    Case(MLP_2X4, 0.4), Case(MLP_2X4, 0.7), Case(MLP_8, 0.55),
    Case(GPT2_1_2X4, 0.7), Case(GPT2_1_2X4, 0.55), Case(GPT2_1_8, 0.55),
    Case(GPT2_2_2X4, 0.7), Case(GPT2_2_8, 0.7),
    Case(LLAMA_2X4, 0.55), Case(LLAMA_8, 0.7),
    Case(GPT2_2_8, 0.55),
]


def run(command: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)


def unbounded_peak(synth: str, case: Case) -> int:
    done = run([synth, *case.model, "--mode", "training"], SOLVE_SECONDS)
    found = re.search(r"memory per device: (\d+) bytes at its peak", done.stderr)
    if done.returncode != 0 or not found:
        raise RuntimeError(f"{case.label()}: no peak in synth's output:\n{done.stderr}")
    return int(found.group(1))


def export(synth: str, case: Case, path: str) -> int:
    """Writes the case's problem to `path`; returns the budget in bytes."""
    budget = int(case.fraction * unbounded_peak(synth, case))
    # The export is written after the search (with its plan), which is cut short here.
    done = run([synth, *case.model, "--mode", "training", "--memory", str(budget), "--max-iterations", "1",
                "--no-family-starts", "--time-limit", "10", "--export-problem", path], SOLVE_SECONDS)
    if not os.path.exists(path):
        raise RuntimeError(f"{case.label()}: synth wrote no problem:\n{done.stderr}")
    return budget


def synth_optimum(synth: str, path: str) -> tuple[int | None, str]:
    """synth's proven optimum of the file (None when not proven) and its last line."""
    # No --time-limit: with one, the anytime search keeps half of it before the exact loop.
    try:
        done = run([synth, "--iopddl", path], SOLVE_SECONDS)
    except subprocess.TimeoutExpired:
        return None, f"not proven within {SOLVE_SECONDS} s"
    last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr.strip()
    found = re.search(r"cost (\d+), proven optimal", last)
    return (int(found.group(1)) if found else None), last


def highs_optimum(script: str, path: str) -> dict[str, object]:
    done = run([sys.executable, script, path, "--time-limit", str(HIGHS_SECONDS)], HIGHS_SECONDS + 60)
    if done.returncode != 0:
        raise RuntimeError(f"highs_milp failed on {path}:\n{done.stderr}")
    result: dict[str, object] = json.loads(done.stdout)
    return result


def verified_cost(synth: str, path: str, assignment: list[int], work: str) -> int | None:
    """The cost `synth --iopddl --verify` gives HiGHS's plan (None when it does not accept it)."""
    solution = os.path.join(work, "highs_solution.json")
    with open(solution, "w") as f:
        json.dump(assignment, f)
    done = run([synth, "--iopddl", path, "--verify", solution], SOLVE_SECONDS)
    found = re.search(r"cost (\d+)", done.stdout + done.stderr)
    return int(found.group(1)) if done.returncode == 0 and found else None


def check(synth: str, script: str, work: str, index: int) -> bool:
    case = CASES[index]
    path = os.path.join(work, f"case{index}.json")
    budget = export(synth, case, path)
    ours, last = synth_optimum(synth, path)
    highs = highs_optimum(script, path)
    theirs = highs["cost"] if highs["status"] == "optimal" else None
    assignment = highs["assignment"]
    verified = verified_cost(synth, path, assignment, work) if isinstance(assignment, list) else None
    ok = ours is not None and theirs is not None and ours == theirs and verified == theirs
    print(f"{'ok  ' if ok else 'FAIL'} {case.label()} (budget {budget} B): synth {ours if ours is not None else last}, "
          f"HiGHS {highs['status']} {highs['cost']} in {highs['seconds']} s, verified {verified}", flush=True)
    return ok


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        import scipy  # noqa: F401  (only whether it is there)
    except ImportError:
        print(f"highs_cross_check: SKIPPED ({sys.executable} has no scipy)")
        return 0
    synth, script, work = argv[0], argv[1], argv[2]
    os.makedirs(work, exist_ok=True)
    chosen = [int(a) for a in argv[3:]] or list(range(len(CASES)))
    failed = [i for i in chosen if not check(synth, script, work, i)]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
