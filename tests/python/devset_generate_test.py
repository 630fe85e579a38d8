#!/usr/bin/env python3
"""Checks bench/devset/generate.py: the first recipe's files stay byte for byte
what bounds.json was computed on, and with --free slicing every consumer
strategy of an edge without forbidden entries has a free producer strategy
(the replicated one at least), as in the contest's tables, where the first
recipe leaves many without one.

usage: devset_generate_test.py REPO_ROOT"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
from typing import Any

FORBIDDEN = 10**18
# sha256 of `generate.py --seed 13 --nodes 816 --limit-factor 1.03` (d816-t, the first recipe)
D816_T_SHA256 = "4450dd962ebdbf1c67c9c8e0bb2c5fbe343e27a183fa674001b7f6acba9f8c09"


def generate(root: str, out: str, *args: str) -> bytes:
    script = os.path.join(root, "bench", "devset", "generate.py")
    subprocess.run([sys.executable, script, *args, out], check=True)
    with open(out, "rb") as f:
        return f.read()


def columns_without_free_entry(problem: dict[str, Any]) -> tuple[int, int]:
    """(consumer strategies with no zero entry, consumer strategies) over the edges without forbidden entries."""
    sizes = [len(costs) for costs in problem["nodes"]["costs"]]
    missing = total = 0
    for (u, v), table in zip(problem["edges"]["nodes"], problem["edges"]["costs"]):
        if any(c >= FORBIDDEN for c in table):
            continue
        for t in range(sizes[v]):
            total += 1
            missing += all(table[s * sizes[v] + t] != 0 for s in range(sizes[u]))
    return missing, total


def main() -> int:
    root = sys.argv[1]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        first = generate(root, os.path.join(tmp, "t.json"), "--seed", "13", "--nodes", "816", "--limit-factor", "1.03")
        if hashlib.sha256(first).hexdigest() != D816_T_SHA256:
            failures.append("the first recipe's d816-t changed (bounds.json no longer holds for it)")
        args = ["--seed", "5", "--nodes", "300", "--limit-factor", "1.03"]
        sliced = generate(root, os.path.join(tmp, "s.json"), *args, "--free", "slicing")
        if sliced != generate(root, os.path.join(tmp, "s2.json"), *args, "--free", "slicing"):
            failures.append("--free slicing: two runs differ")
        missing, total = columns_without_free_entry(json.loads(sliced)["problem"])
        if total == 0 or missing:
            failures.append(f"--free slicing: {missing} of {total} consumer strategies have no free producer strategy")
        random_missing, _ = columns_without_free_entry(json.loads(generate(root, os.path.join(tmp, "r.json"), *args))["problem"])
        if random_missing == 0:
            failures.append("--free random: every consumer strategy has a free producer strategy (the recipes do not differ)")
    for f in failures:
        print("FAIL:", f)
    print("ok" if not failures else f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
