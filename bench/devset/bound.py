#!/usr/bin/env python3
"""The independent lower bound of one development-set problem: HiGHS
(scipy.optimize.milp) on the textbook MILP of bench/highs_milp.py, with the
usage rows written compactly (a running total per time step instead of one
row per set of nodes live together, the same polytope, linear in size).

Prints one JSON object: bound (HiGHS's dual bound, or the LP optimum with
--lp), cost (HiGHS's best plan, or null), status and seconds.

usage: bench/devset/bound.py [--time-limit 300] [--lp] PROBLEM.json"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

import numpy as np
from scipy import optimize, sparse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from highs_milp import Model, edge_columns, load, node_columns, plan_cost  # noqa: E402


def running_usage_rows(model: Model, problem: dict[str, Any], x: list[dict[int, int]]) -> None:
    """z_t = z_(t-1) + usage starting at t - usage ending at t, and z_t <= limit."""
    limit = problem.get("usage_limit")
    if limit is None:
        return
    intervals = problem["nodes"]["intervals"]
    usages = problem["nodes"]["usages"]
    starts: dict[int, list[int]] = {}
    ends: dict[int, list[int]] = {}
    for v, (lo, hi) in enumerate(intervals):
        if hi > lo:
            starts.setdefault(lo, []).append(v)
            ends.setdefault(hi, []).append(v)
    scale = 1.0 / float(limit)  # usages in units of the limit: HiGHS's tolerances are absolute
    previous = -1
    for t in sorted(set(starts) | set(ends)):
        z = model.column(0.0, False)
        entries = [(z, 1.0)] + ([(previous, -1.0)] if previous >= 0 else [])
        for v in starts.get(t, []):
            entries += [(col, -scale * usages[v][s]) for s, col in x[v].items() if usages[v][s]]
        for v in ends.get(t, []):
            entries += [(col, scale * usages[v][s]) for s, col in x[v].items() if usages[v][s]]
        model.row(entries, 0.0, 0.0)
        model.row([(z, 1.0)], -np.inf, 1.0)
        previous = z


def solve(problem: dict[str, Any], time_limit: float, lp: bool) -> dict[str, Any]:
    model = Model()
    x = node_columns(model, problem)
    edge_columns(model, problem, x)
    running_usage_rows(model, problem, x)
    n = len(model.costs)
    a = sparse.csr_array((model.vals, (model.rows, model.cols)), shape=(len(model.lower), n))
    integrality = np.zeros(n) if lp else np.array(model.integral)
    # x and the edge columns lie in [0, 1] by their rows; the running totals need no upper bound.
    upper = np.where(np.array(model.integral) == 1, 1.0, np.inf)
    lower = np.zeros(n)
    options = {"time_limit": time_limit, "disp": False, "presolve": True, "mip_rel_gap": 0.0}
    start = time.monotonic()
    result = optimize.milp(np.array(model.costs), constraints=optimize.LinearConstraint(a, model.lower, model.upper),
                           integrality=integrality, bounds=optimize.Bounds(lower, upper), options=options)
    status = {0: "optimal", 1: "time limit", 2: "infeasible"}.get(result.status, "error")
    out: dict[str, Any] = {"status": status, "bound": None, "cost": None, "seconds": round(time.monotonic() - start, 1),
                           "kind": "highs-lp" if lp else "highs-milp"}
    if lp:
        out["bound"] = float(result.fun) if result.status == 0 else None
        return out
    if result.x is not None:
        out["cost"] = plan_cost(problem, [max(cols, key=lambda s: result.x[cols[s]]) for cols in x])
    bound = getattr(result, "mip_dual_bound", None)
    out["bound"] = float(bound) if bound is not None else None
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("problem")
    ap.add_argument("--time-limit", type=float, default=300.0)
    ap.add_argument("--lp", action="store_true", help="the LP relaxation's optimum only")
    a = ap.parse_args()
    print(json.dumps(solve(load(a.problem), a.time_limit, a.lp)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
