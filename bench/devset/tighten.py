#!/usr/bin/env python3
"""Writes a copy of an IOPDDL problem whose usage limit is a given factor of
its least possible peak (every node at its least usage among the strategies
its node costs allow). The contest files B and G (816 nodes) have the limit
at 1.10 times that peak, where it hardly binds; at 1.01 it binds, and the
copy is the tight-limit 816-node member of the family that issue 32 asks
proofs of (bench/devset/README.md, "Tightened contest problems").

usage: bench/devset/tighten.py --limit-factor 1.01 IN.json[.gz] OUT.json"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import sys

FORBIDDEN = 10**18  # a node cost at or above this is a forbidden strategy


def load(path: str) -> dict:
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def least_peak(problem: dict) -> int:
    """The peak over time of the summed least usages of the live nodes."""
    nodes = problem["nodes"]
    end = max((b for _, b in nodes["intervals"]), default=0)
    delta = [0] * (end + 1)
    for (start, stop), usages, costs in zip(nodes["intervals"], nodes["usages"], nodes["costs"]):
        allowed = [u for u, c in zip(usages, costs) if c < FORBIDDEN] or usages
        if stop > start:
            delta[start] += min(allowed)
            delta[stop] -= min(allowed)
    peak = running = 0
    for d in delta:
        running += d
        peak = max(peak, running)
    return peak


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit-factor", type=float, required=True, help="the new limit over the least possible peak")
    ap.add_argument("--name", default="", help="the copy's problem name (default: the original's with -t<factor>)")
    ap.add_argument("input")
    ap.add_argument("output")
    a = ap.parse_args()
    if a.limit_factor < 1:
        print(f"tighten.py: --limit-factor {a.limit_factor} is below 1: no plan would keep the limit", file=sys.stderr)
        return 2
    data = load(a.input)
    problem = data["problem"]
    peak = least_peak(problem)
    old = problem.get("usage_limit")
    problem["usage_limit"] = int(a.limit_factor * peak)
    problem["name"] = a.name or f"{problem['name']}-t{round(a.limit_factor * 100)}"
    tmp = a.output + ".tmp"
    with open(tmp, "w") as f:
        json.dump(data, f)
    os.replace(tmp, a.output)
    print(f"{problem['name']}: least peak {peak}, limit {old} -> {problem['usage_limit']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
