#!/usr/bin/env python3
"""The textbook MILP of an IOPDDL problem, solved with HiGHS (scipy.optimize.milp).

An independent reference for shardsynth's solver: it shares no code with it.
Variables: x[v, s] (binary, node v takes strategy s) and y[e, s, t]
(continuous in [0, 1], edge e takes the pair (s, t)). Rows: each node takes
one strategy; each edge's pair marginals equal its end nodes' choices (so y
is integral once x is); at every set of nodes live together, the usages sum
to at most the limit. Forbidden strategies and pairs (10^18) get no variable.

Prints one JSON object: status ("optimal", "time limit", "infeasible" or
"error"), cost (the best plan's cost, an integer, or null), bound (HiGHS's
dual bound, a float, or null), seconds, and assignment (one strategy per node,
or null). With --lp it solves the LP relaxation instead (cost and assignment
null, bound its optimum).
"""
from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import optimize, sparse

FORBIDDEN = 10**18


@dataclass
class Model:
    """The MILP's columns and rows, built up column by column."""

    costs: list[float] = field(default_factory=list)  # objective per column
    integral: list[int] = field(default_factory=list)  # 1 for the binary x columns, 0 for y
    rows: list[int] = field(default_factory=list)  # coefficient triplets: row index
    cols: list[int] = field(default_factory=list)  # column index
    vals: list[float] = field(default_factory=list)  # coefficient
    lower: list[float] = field(default_factory=list)  # row lower bound, per row
    upper: list[float] = field(default_factory=list)  # row upper bound, per row

    def column(self, cost: float, integral: bool) -> int:
        self.costs.append(cost)
        self.integral.append(1 if integral else 0)
        return len(self.costs) - 1

    def row(self, entries: list[tuple[int, float]], lower: float, upper: float) -> None:
        index = len(self.lower)
        for col, val in entries:
            self.rows.append(index)
            self.cols.append(col)
            self.vals.append(val)
        self.lower.append(lower)
        self.upper.append(upper)


def load(path: str) -> dict[str, Any]:
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        document = json.load(f)
    problem: dict[str, Any] = document["problem"]
    return problem


def usage_sets(intervals: list[list[int]]) -> list[list[int]]:
    """The sets of nodes live together at each start step, those contained in another one dropped."""
    points = sorted({start for start, end in intervals if start < end})
    sets = [frozenset(v for v, (s, e) in enumerate(intervals) if s <= t < e) for t in points]
    unique = list(dict.fromkeys(sets))
    kept = [a for a in unique if not any(a < b for b in unique)]
    return [sorted(a) for a in kept]


def node_columns(model: Model, problem: dict[str, Any]) -> list[dict[int, int]]:
    """x columns per node (strategy -> column) and the one-strategy rows."""
    x: list[dict[int, int]] = []
    for costs in problem["nodes"]["costs"]:
        columns = {s: model.column(float(c), True) for s, c in enumerate(costs) if c < FORBIDDEN}
        model.row([(col, 1.0) for col in columns.values()], 1.0, 1.0)
        x.append(columns)
    return x


def edge_columns(model: Model, problem: dict[str, Any], x: list[dict[int, int]]) -> None:
    """y columns per edge and the rows tying their marginals to x."""
    sizes = [len(costs) for costs in problem["nodes"]["costs"]]
    for (u, v), costs in zip(problem["edges"]["nodes"], problem["edges"]["costs"]):
        by_row: dict[int, list[tuple[int, float]]] = {s: [] for s in x[u]}
        by_col: dict[int, list[tuple[int, float]]] = {t: [] for t in x[v]}
        for s in x[u]:
            for t in x[v]:
                c = costs[s * sizes[v] + t]
                if c >= FORBIDDEN:
                    continue
                col = model.column(float(c), False)
                by_row[s].append((col, 1.0))
                by_col[t].append((col, 1.0))
        for s, entries in by_row.items():
            model.row(entries + [(x[u][s], -1.0)], 0.0, 0.0)
        for t, entries in by_col.items():
            model.row(entries + [(x[v][t], -1.0)], 0.0, 0.0)


def usage_rows(model: Model, problem: dict[str, Any], x: list[dict[int, int]]) -> None:
    limit = problem.get("usage_limit")
    if limit is None:
        return
    usages = problem["nodes"]["usages"]
    for live in usage_sets(problem["nodes"]["intervals"]):
        entries = [(col, float(usages[v][s])) for v in live for s, col in x[v].items() if usages[v][s] != 0]
        if entries:
            model.row(entries, -np.inf, float(limit))


def build(problem: dict[str, Any]) -> tuple[Model, list[dict[int, int]]]:
    model = Model()
    x = node_columns(model, problem)
    edge_columns(model, problem, x)
    usage_rows(model, problem, x)
    return model, x


def solve(problem: dict[str, Any], time_limit: float, lp: bool) -> dict[str, Any]:
    model, x = build(problem)
    n = len(model.costs)
    a = sparse.csr_array((model.vals, (model.rows, model.cols)), shape=(len(model.lower), n))
    constraints = optimize.LinearConstraint(a, np.array(model.lower), np.array(model.upper))
    integrality = np.zeros(n) if lp else np.array(model.integral)
    # mip_rel_gap 0: HiGHS's default (1e-4) stops at plans up to 0.01% above the optimum.
    options = {"time_limit": time_limit, "disp": False, "presolve": True, "mip_rel_gap": 0.0}
    start = time.monotonic()
    result = optimize.milp(np.array(model.costs), constraints=constraints, integrality=integrality,
                           bounds=optimize.Bounds(0.0, 1.0), options=options)
    seconds = time.monotonic() - start
    status = {0: "optimal", 1: "time limit", 2: "infeasible"}.get(result.status, "error")
    out: dict[str, Any] = {"status": status, "cost": None, "bound": None, "seconds": round(seconds, 3),
                           "assignment": None}
    if lp:
        out["bound"] = float(result.fun) if result.status == 0 else None
        return out
    if result.x is not None:
        assignment = [max(cols, key=lambda s: result.x[cols[s]]) for cols in x]
        out["assignment"] = assignment
        out["cost"] = plan_cost(problem, assignment)
    bound = getattr(result, "mip_dual_bound", None)
    out["bound"] = float(bound) if bound is not None else None
    return out


def plan_cost(problem: dict[str, Any], assignment: list[int]) -> int:
    """The plan's cost, counted exactly in integers (node and edge terms)."""
    sizes = [len(costs) for costs in problem["nodes"]["costs"]]
    total = sum(int(costs[s]) for costs, s in zip(problem["nodes"]["costs"], assignment))
    for (u, v), costs in zip(problem["edges"]["nodes"], problem["edges"]["costs"]):
        total += int(costs[assignment[u] * sizes[v] + assignment[v]])
    return total


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("problem", help="IOPDDL problem file (.json or .json.gz)")
    parser.add_argument("--time-limit", type=float, default=60.0, help="seconds (default 60)")
    parser.add_argument("--lp", action="store_true", help="solve the LP relaxation only")
    args = parser.parse_args(argv)
    if args.time_limit <= 0:
        print(f"highs_milp: --time-limit {args.time_limit} is not positive", file=sys.stderr)
        return 2
    print(json.dumps(solve(load(args.problem), args.time_limit, args.lp)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
