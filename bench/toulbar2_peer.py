#!/usr/bin/env python3
"""A peer solver for IOPDDL problems after the ASPLOS 2025 contest's first
place ("Soft Constraints, Strong Solutions", toulbar2): a benchmark baseline
that shares no code with synth. Written from the idea, not from their code.

What it models. The problem as a cost function network: one variable per
node, its strategies as values, node costs as unary cost functions, edge
tables as binary ones, entries >= 10^18 as hard (forbidden). The network is
first folded exactly, once: values that a forbidden entry rules out against
every value of a neighbour are dropped, and a node whose strategy an edge
determines (a functional edge: one allowed entry per row) is merged into the
node that determines it; toulbar2 gets this kernel (contest A: 34,932 nodes,
285 kernel variables). Usages are not folded: each member keeps its own
interval. The memory limit is checked at the check points (the steps where
some interval starts; usage only rises there) and given to toulbar2 in two
ways:

- Lagrangian penalties (the first place's way): a multiplier per check
  point; a node pays its usage times the sum of the multipliers of the
  points it is live at, on its unary costs. Each round toulbar2 minimises the
  penalised kernel, its plan is made to fit by a greedy repair (at the worst
  check point, the kernel variable change with the least cost increase per
  unit of usage freed, no forbidden entry) and polished (single-variable
  changes that lower the cost and keep the limit), the multipliers take a
  projected subgradient step of Polyak's size towards the best feasible
  cost, and up to three more solves raise them where the plan overflows
  until toulbar2's plan fits.
- Knapsack rows, toulbar2's native linear constraints: one row per check
  point that a plan overflowed, added lazily (all of them would be up to
  30,000 rows of hundreds of variables). Where toulbar2 finishes such a solve
  and the plan fits everywhere, it is the optimum.

The default (--memory auto): a first solve without penalties (the optimum
when it fits); then, where toulbar2 solved that to optimality and the plan
overflows at most KNAPSACK_OVERFLOWS kept check points, knapsack rows until
toulbar2 does not finish a solve in its slice; then Lagrangian rounds for
--lagrangian-share of the time left; then, from the best plan, a large
neighbourhood search (toulbar2 on a few dozen to hundreds of kernel
variables around a tight check point, the rest fixed, the limit as knapsack
rows). toulbar2's search on the whole kernel is its hybrid best-first branch
and bound where it finishes the first solve within its slice, else its
variable neighbourhood search (--search); the neighbourhoods always get the
branch and bound. Where toulbar2 finds no plan at all, it prints best none.

What it leaves out. The first place's own code, tuning and parallel
portfolio: this is one process and one thread at a time (each toulbar2
solve runs in a forked child, killed at its deadline, so the wall-clock limit
holds and a toulbar2 failure costs one solve). No lower bound is reported;
optimality only as said above (stderr says "proven optimal"). Solves are cut
by wall-clock slices, so two runs with the same seed may differ.

Output: `t=<seconds> cost=<int>` each time a cheaper feasible plan is found,
then `best <cost>` or `best none`. --solution writes the best plan as a JSON
array of strategy indices, the format `synth --iopddl FILE --verify OUT`
reads.

usage: bench/toulbar2_peer.py FILE --time-limit SECONDS [--seed N] [--solution OUT]
           [--memory auto|lagrangian|knapsack] [--search auto|hbfs|vns] [--lagrangian-share 0.2] [--verbose]
"""
from __future__ import annotations

import time

START = time.monotonic()  # the wall-clock limit counts from here, before the imports below

import argparse  # noqa: E402
import collections  # noqa: E402
import gzip  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import os  # noqa: E402
import pickle  # noqa: E402
import random  # noqa: E402
import select  # noqa: E402
import signal  # noqa: E402
import sys  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

FORBIDDEN = 10**18
# Seconds kept back at the end for writing the plan and exiting.
RESERVE = 0.4
# The greedy repair is tried on plans whose peak is at most this many times the limit.
REPAIR_RANGE = 1.25
# The neighbourhood search's first rows: the tight kept check points this close to the centre.
NEAR = 16
# Knapsack rows added per solve, at most (the worst overflows first).
ROWS_PER_ROUND = 200
# --memory auto tries the knapsack rows only where the unpenalised plan overflows at most this many kept check
# points (measured: toulbar2 proved the optimum with 45-414 such rows on d816-t, s816-t, B and h1k, and found
# no plan in 4 s with 584-19,779 on h3k9, d3k-t, d3k-a, h4k5 and A).
KNAPSACK_OVERFLOWS = 500


def elapsed() -> float:
    return time.monotonic() - START


# ---------------------------------------------------------------- the problem


@dataclass
class Problem:
    """One IOPDDL problem, its tables as numpy arrays.

    Time is reduced to check points: the distinct start steps of the nodes
    that are live at some step. Usage only rises at a start, so the limit
    holds at every step when it holds at every check point; node v is live at
    check points lo[v] .. hi[v]-1 (none when lo[v] == hi[v])."""

    name: str
    costs: list[np.ndarray]  # per node: int64 per strategy, FORBIDDEN = illegal
    usages: list[np.ndarray]  # per node: int64 per strategy
    lo: np.ndarray  # per node: first check point it is live at
    hi: np.ndarray  # per node: one past its last
    edges: list[tuple[int, int, np.ndarray]]  # (u, v, table[strategy of u, strategy of v])
    limit: int | None
    points: int  # number of check points

    def __post_init__(self) -> None:
        live = self.lo < self.hi
        self.least_usage = np.array([int(u.min()) if len(u) else 0 for u in self.usages], dtype=np.int64)
        self.least_usage[~live] = 0
        # Profiles in int64 unless a sum of usages could pass it (then exact Python integers).
        most = max((int(u.max()) for u in self.usages if len(u)), default=0)
        self.dtype: Any = object if most * max(1, len(self.costs)) >= 2**62 else np.int64

    @property
    def size(self) -> int:
        return len(self.costs)


def load_problem(path: str) -> Problem:
    """Reads a contest file (plain or gzip-compressed JSON)."""
    opener: Any = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        p = json.load(f)["problem"]
    intervals = np.array(p["nodes"]["intervals"], dtype=np.int64).reshape(-1, 2)
    live = intervals[:, 0] < intervals[:, 1]
    starts = np.unique(intervals[live, 0])
    lo = np.where(live, np.searchsorted(starts, intervals[:, 0]), 0).astype(np.int64)
    hi = np.where(live, np.searchsorted(starts, intervals[:, 1]), 0).astype(np.int64)
    costs = [np.minimum(np.array(c, dtype=np.int64), FORBIDDEN) for c in p["nodes"]["costs"]]
    usages = [np.array(u, dtype=np.int64) for u in p["nodes"]["usages"]]
    tables = []
    for (u, v), t in zip(p["edges"]["nodes"], p["edges"]["costs"]):
        table = np.minimum(np.array(t, dtype=np.int64), FORBIDDEN).reshape(len(costs[u]), len(costs[v]))
        tables.append((int(u), int(v), table))
    limit = p.get("usage_limit")
    return Problem(name=str(p.get("name", os.path.basename(path))), costs=costs, usages=usages, lo=lo, hi=hi,
                   edges=tables, limit=None if limit is None else int(limit), points=len(starts))


# ---------------------------------------------------------------- plans


def plan_cost(p: Problem, plan: list[int]) -> int:
    """The plan's cost without the memory limit, exactly; FORBIDDEN when it picks a forbidden entry."""
    total = 0
    for v, s in enumerate(plan):
        c = int(p.costs[v][s])
        if c >= FORBIDDEN:
            return FORBIDDEN
        total += c
    for u, v, table in p.edges:
        c = int(table[plan[u], plan[v]])
        if c >= FORBIDDEN:
            return FORBIDDEN
        total += c
    return total


def usage_profile(p: Problem, plan: list[int]) -> np.ndarray:
    """Usage at every check point."""
    diff = np.zeros(p.points + 1, dtype=p.dtype)
    used = np.array([int(p.usages[v][s]) for v, s in enumerate(plan)], dtype=p.dtype)
    live = p.lo < p.hi
    np.add.at(diff, p.lo[live], used[live])
    np.add.at(diff, p.hi[live], -used[live])
    return np.cumsum(diff[:-1]) if p.points else np.zeros(0, dtype=p.dtype)


def fits(p: Problem, profile: np.ndarray) -> bool:
    return p.limit is None or p.points == 0 or bool(profile.max() <= p.limit)


# ---------------------------------------------------------------- the kernel


def saturating_add(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a + b for costs in [0, FORBIDDEN], FORBIDDEN absorbing (2 * 10^18 fits in int64)."""
    return np.minimum(a + b, FORBIDDEN)


class Kernel:
    """The cost function network toulbar2 solves: the problem folded exactly.

    A kernel variable stands for a root node and the nodes merged into it; its
    values are the root's strategies still allowed, and every member's
    strategy is a function of it. Folding drops values that a forbidden entry
    rules out against every value of a neighbour (arc consistency on the hard
    part), and merges the far end of a functional edge (each allowed row has
    exactly one allowed entry) into the near end: the merged node's costs and
    the edge's entries become unary costs of the root, its other edges are
    re-indexed onto the root, and parallel tables are summed. Usages are not
    folded into costs: members keep their own intervals, and the penalties
    (or knapsack rows) are computed from them."""

    def __init__(self, p: Problem) -> None:
        self.p = p
        self.domain: dict[int, np.ndarray] = {}  # var -> its root's strategies still allowed
        self.base: dict[int, np.ndarray] = {}  # var -> int64 cost per value (members' costs, internal edges)
        self.adj: dict[int, dict[int, np.ndarray]] = {}  # var -> neighbour -> table[own value, its value]
        self.links: list[tuple[int, int, np.ndarray]] = []  # (merged var, into var, into's root strategy -> merged's)
        self.infeasible = False
        for v in range(p.size):
            ok = p.costs[v] < FORBIDDEN
            if p.limit is not None and p.lo[v] < p.hi[v]:
                ok &= p.usages[v] <= p.limit
            self.domain[v] = np.flatnonzero(ok)
            self.base[v] = p.costs[v][self.domain[v]]
            self.adj[v] = {}
            self.infeasible |= not ok.any()
        for u, v, table in p.edges:
            self._add_table(u, v, table[np.ix_(self.domain[u], self.domain[v])])
        if not self.infeasible:
            self._fold()
        self._finish()

    def _add_table(self, a: int, b: int, table: np.ndarray) -> None:
        if b in self.adj[a]:
            table = saturating_add(self.adj[a][b], table)
        self.adj[a][b] = table
        self.adj[b][a] = table.T

    def _restrict(self, k: int, keep: np.ndarray) -> None:
        self.domain[k] = self.domain[k][keep]
        self.base[k] = self.base[k][keep]
        for w, table in self.adj[k].items():
            self.adj[k][w] = table[keep]
            self.adj[w][k] = self.adj[k][w].T
        self.infeasible |= not keep.any()

    def _merge(self, k: int, j: int, f: np.ndarray) -> list[int]:
        """Merges var j into var k, j's value being f[k's value]; returns j's other neighbours."""
        table = self.adj[k].pop(j)
        del self.adj[j][k]
        g = np.full(len(self.p.costs[k]), -1, dtype=np.int64)
        g[self.domain[k]] = self.domain[j][f]
        self.links.append((j, k, g))
        internal = table[np.arange(len(f)), f]
        self.base[k] = saturating_add(saturating_add(self.base[k], self.base.pop(j)[f]), internal)
        del self.domain[j]
        touched = []
        for w, t in self.adj.pop(j).items():
            del self.adj[w][j]
            self._add_table(k, w, t[f])
            touched.append(w)
        return touched

    def _fold(self) -> None:
        queue = collections.deque((a, b) for a in self.adj for b in self.adj[a] if a < b)
        while queue and not self.infeasible:
            a, b = queue.popleft()
            if a not in self.adj or b not in self.adj[a]:
                continue
            allowed = self.adj[a][b] < FORBIDDEN
            per_row, per_col = allowed.sum(1), allowed.sum(0)
            if not per_row.all() or not per_col.all():
                for k, count in ((a, per_row), (b, per_col)):
                    if not count.all():
                        self._restrict(k, count > 0)
                        queue.extend((k, w) for w in self.adj[k])
                continue
            a_sets_b, b_sets_a = bool((per_row == 1).all()), bool((per_col == 1).all())
            if a_sets_b and b_sets_a and len(self.adj[b]) > len(self.adj[a]):
                a_sets_b = False  # a bijection: merge the var of fewer neighbours into the other
            if a_sets_b:
                keep, touched = a, self._merge(a, b, allowed.argmax(1))
            elif b_sets_a:
                keep, touched = b, self._merge(b, a, allowed.argmax(0))
            else:
                continue
            bad = self.base[keep] >= FORBIDDEN
            if bad.any():
                self._restrict(keep, ~bad)
                touched = list(self.adj[keep])
            queue.extend((keep, w) for w in touched)

    def _finish(self) -> None:
        """Numbers the vars 0.., maps every node's strategy to its var's values, and lays out the flat arrays."""
        p = self.p
        self.roots = sorted(self.domain)
        index = {k: i for i, k in enumerate(self.roots)}
        self.sizes = np.array([len(self.domain[k]) for k in self.roots], dtype=np.int64)
        self.var_of = np.zeros(p.size, dtype=np.int64)
        self.value_map: list[np.ndarray] = [np.zeros(0, dtype=np.int64)] * p.size
        if self.infeasible:
            return
        # full[v] = (root, map from the root's strategies to v's), resolved from the last merge back
        full: dict[int, tuple[int, np.ndarray]] = {k: (k, np.arange(len(p.costs[k]))) for k in self.roots}
        for j, k, g in reversed(self.links):
            root, h = full[k]
            full[j] = (root, np.where(h >= 0, g[np.maximum(h, 0)], -1))
        self.members: list[list[int]] = [[] for _ in self.roots]
        for v, (root, m) in full.items():
            i = index[root]
            self.var_of[v] = i
            self.value_map[v] = m[self.domain[root]]
            if (self.value_map[v] < 0).any():
                raise AssertionError(f"node {v}: its strategy is not defined by its kernel variable")
            self.members[i].append(v)
        del full
        self.links = []
        # values and unary costs laid out flat: var i's values at offset[i] .. offset[i+1]-1
        self.offset = np.concatenate([[0], np.cumsum(self.sizes)]).astype(np.int64)
        self.base_flat = np.concatenate([self.base[k] for k in self.roots]).astype(np.int64)
        # one flat entry per (live member, value of its var): its usage there
        live = [v for v in range(p.size) if p.lo[v] < p.hi[v]]
        self.flat_node = np.concatenate([np.full(self.sizes[self.var_of[v]], v, dtype=np.int64) for v in live]
                                        + [np.zeros(0, dtype=np.int64)])
        self.flat_target = np.concatenate([self.offset[self.var_of[v]] + np.arange(self.sizes[self.var_of[v]])
                                           for v in live] + [np.zeros(0, dtype=np.int64)])
        self.flat_usage = np.concatenate([p.usages[v][self.value_map[v]] for v in live]
                                         + [np.zeros(0, dtype=np.int64)])
        # per var: its live members' intervals and usages per value
        self.member_lo: list[np.ndarray] = []
        self.member_hi: list[np.ndarray] = []
        self.member_use: list[np.ndarray] = []
        for i, ms in enumerate(self.members):
            lv = [v for v in ms if p.lo[v] < p.hi[v]]
            self.member_lo.append(np.array([p.lo[v] for v in lv], dtype=np.int64))
            self.member_hi.append(np.array([p.hi[v] for v in lv], dtype=np.int64))
            self.member_use.append(np.array([p.usages[v][self.value_map[v]] for v in lv], dtype=np.int64)
                                   .reshape(len(lv), int(self.sizes[i])))
        # tables between vars, each once (i < j), and per var its neighbours
        self.tables: list[tuple[int, int, np.ndarray]] = []
        self.neighbours: list[list[tuple[int, np.ndarray]]] = [[] for _ in self.roots]
        for a in self.roots:
            for b, table in self.adj[a].items():
                i, j = index[a], index[b]
                if i < j:
                    self.tables.append((i, j, table))
                    self.neighbours[i].append((j, table))
                    self.neighbours[j].append((i, table.T))
        del self.adj, self.base

        self.binary_groups = grouped_tables(self.tables)
        self.unary_rows: list[tuple[np.ndarray, np.ndarray]] = []  # (vars of one domain size, their flat indices)
        for size in np.unique(self.sizes):
            members = np.flatnonzero(self.sizes == size)
            self.unary_rows.append((members.astype(np.int32), self.offset[members][:, None] + np.arange(size)[None, :]))

    @property
    def count(self) -> int:
        return len(self.roots)

    def network(self, unary: np.ndarray, rows: list[Row]) -> Network:
        """The kernel as a network, with these flat unary costs."""
        return Network(self.sizes, [(members, unary[flat]) for members, flat in self.unary_rows], self.binary_groups,
                       rows)

    def expand(self, values: np.ndarray) -> list[int]:
        """The plan (a strategy per node) of an assignment of the kernel vars."""
        return [int(self.value_map[v][values[self.var_of[v]]]) for v in range(self.p.size)]

    def cost(self, values: np.ndarray) -> int:
        """The plan's cost, exactly (FORBIDDEN when it picks a forbidden entry)."""
        total = sum(int(self.base_flat[self.offset[i] + values[i]]) for i in range(self.count))
        for i, j, table in self.tables:
            total += int(table[values[i], values[j]])
        return min(total, FORBIDDEN)

    def profile(self, values: np.ndarray) -> np.ndarray:
        p = self.p
        diff = np.zeros(p.points + 1, dtype=p.dtype)
        for i in range(self.count):
            if len(self.member_lo[i]):
                use = self.member_use[i][:, values[i]].astype(p.dtype)
                np.add.at(diff, self.member_lo[i], use)
                np.add.at(diff, self.member_hi[i], -use)
        return np.cumsum(diff[:-1]) if p.points else np.zeros(0, dtype=p.dtype)

    def penalised_unary(self, per_node: np.ndarray) -> np.ndarray:
        """Flat unary costs (float, inf = forbidden) with each live member paying per_node[v] * its usage."""
        extra = np.bincount(self.flat_target, weights=per_node[self.flat_node] * self.flat_usage,
                            minlength=int(self.offset[-1]))
        unary = self.base_flat.astype(np.float64) + extra
        unary[self.base_flat >= FORBIDDEN] = np.inf
        return unary

    def usage_at(self, point: int) -> np.ndarray:
        """Flat: per (var, value), the usage of the var's members live at the check point, exactly."""
        p = self.p
        live = (p.lo[self.flat_node] <= point) & (p.hi[self.flat_node] > point)
        out = np.zeros(int(self.offset[-1]), dtype=p.dtype)
        np.add.at(out, self.flat_target[live], self.flat_usage[live].astype(p.dtype))
        return out


# ---------------------------------------------------------------- toulbar2


Row = tuple[np.ndarray, list[np.ndarray], int]  # a knapsack row: (vars, per var its weight per value, rhs): sum <= rhs


@dataclass
class Network:
    """A cost function network as toulbar2 gets it: domain sizes, unary and binary tables grouped by shape
    (float costs, inf = forbidden), knapsack rows."""

    sizes: np.ndarray
    unary: list[tuple[np.ndarray, np.ndarray]]  # (vars, costs[var, value]) per domain size
    binary: list[tuple[np.ndarray, np.ndarray]]  # (scopes[:, 2], costs[table, value, value]) per shape
    rows: list[Row]


def grouped_tables(tables: list[tuple[int, int, np.ndarray]]) -> list[tuple[np.ndarray, np.ndarray]]:
    """Binary tables grouped by shape, as float arrays with inf for the forbidden entries."""
    by_shape: dict[tuple[int, int], list[tuple[int, int, np.ndarray]]] = collections.defaultdict(list)
    for i, j, table in tables:
        by_shape[table.shape].append((i, j, table))
    groups = []
    for items in by_shape.values():
        scopes = np.array([[i, j] for i, j, _ in items], dtype=np.int32).reshape(len(items), 2)
        costs = np.stack([t for _, _, t in items]).astype(np.float64)
        costs[costs >= FORBIDDEN] = np.inf
        groups.append((scopes, costs))
    return groups


def grouped_unary(sizes: np.ndarray, unary: list[np.ndarray]) -> list[tuple[np.ndarray, np.ndarray]]:
    groups = []
    for size in np.unique(sizes):
        members = np.flatnonzero(sizes == size)
        groups.append((members.astype(np.int32), np.stack([unary[i] for i in members])))
    return groups


class Toulbar2:
    """Solves a network with pytoulbar2 for a while, in a forked child.

    search "hbfs": toulbar2's default anytime search (hybrid best-first
    branch and bound, preprocessing on). search "vns": its decomposition-guided
    variable neighbourhood search (CFN(vns=0): the first plan by a
    limited-discrepancy dive that follows the value hints)."""

    def __init__(self, search: str, seed: int) -> None:
        import pytoulbar2  # imported here: the rest of the module does not need it

        self.pytoulbar2 = pytoulbar2
        self.search = search
        self.seed = seed
        self.verbosity = -1

    def solve(self, network: Network, seconds: int, hint: np.ndarray | None, hard_stop: float,
              search: str | None = None) -> tuple[np.ndarray | None, bool]:
        """The best assignment toulbar2 finds within `seconds` (None if none), and whether it proved it optimal.

        toulbar2 runs in a forked child that is killed at hard_stop (seconds since START): its own timer
        is not checked everywhere (it overran by seconds while posting knapsack rows), and a crash or
        a memory blow-up there costs this solve only."""
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: solve, send the answer, exit without Python's clean-up
            os.close(read_end)
            try:
                answer = pickle.dumps(self._solve_here(network, seconds, hint, search or self.search))
            except BaseException:
                answer = pickle.dumps((None, False))
            with os.fdopen(write_end, "wb") as out:
                out.write(answer)
            os._exit(0)
        os.close(write_end)
        chunks: list[bytes] = []
        with os.fdopen(read_end, "rb") as inp:
            while True:
                ready, _, _ = select.select([inp], [], [], max(0.0, hard_stop - elapsed()))
                if not ready:
                    os.kill(pid, signal.SIGKILL)
                    chunks = []
                    break
                chunk = os.read(inp.fileno(), 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
        os.waitpid(pid, 0)
        if not chunks:
            return None, False
        values, proven = pickle.loads(b"".join(chunks))
        return values, proven

    def _solve_here(self, network: Network, seconds: int, hint: np.ndarray | None,
                    search: str) -> tuple[np.ndarray | None, bool]:
        cfn = self.pytoulbar2.CFN(vns=0 if search == "vns" else None, seed=self.seed, verbose=self.verbosity)
        wcsp = cfn.CFN.wcsp
        for i, size in enumerate(network.sizes):
            wcsp.makeEnumeratedVariable(f"x{i}", 0, int(size) - 1)
        for members, costs in network.unary:
            cfn.AddFunctions(members, np.rint(costs))
        for scopes, costs in network.binary:
            cfn.AddFunctions(scopes, costs)
        for scope, weights, rhs in network.rows:
            # toulbar2's knapsack form is "sum of weights >= capacity": "<= rhs" is written negated
            parts = [str(-rhs)]
            for weight in weights:
                nonzero = np.flatnonzero(weight)
                parts.append(str(len(nonzero)))
                parts.extend(f"{a} {-int(weight[a])}" for a in nonzero)
            wcsp.postKnapsackConstraint([int(i) for i in scope], " ".join(parts), kp=True)
        if hint is not None:
            for i, value in enumerate(hint):
                wcsp.setBestValue(i, int(value))
        seconds = max(1, int(seconds))
        began = time.monotonic()
        try:
            result = cfn.Solve(timeLimit=seconds)
        except Exception:  # a contradiction in preprocessing (no plan below the bound): treated as none found
            return None, False
        if result is None:
            return None, False
        # toulbar2 returns before its timer only when the search is complete (its dual bound is not updated
        # at the end, so it does not tell)
        proven = time.monotonic() - began < seconds - 0.1
        return np.array(result[0], dtype=np.int64), proven


# ---------------------------------------------------------------- repair and polish


class KernelPlan:
    """An assignment of the kernel vars with its usage profile: the greedy repair and the polish move single vars."""

    def __init__(self, kernel: Kernel, values: np.ndarray, profile: np.ndarray | None = None) -> None:
        self.kernel = kernel
        self.values = values.copy()
        self.profile = kernel.profile(self.values) if profile is None else profile.copy()
        self.limit = kernel.p.limit
        self.cached: dict[int, np.ndarray] = {}  # var -> totals, dropped when it or a neighbour moves

    def totals(self, i: int) -> np.ndarray:
        """The cost of each value of var i with its neighbours as they are (FORBIDDEN saturating)."""
        if i in self.cached:
            return self.cached[i]
        k = self.kernel
        total = k.base_flat[k.offset[i]:k.offset[i + 1]].copy()
        for j, table in k.neighbours[i]:
            total = saturating_add(total, table[:, self.values[j]])
        self.cached[i] = total
        return total

    def change(self, i: int, b: int) -> tuple[int, np.ndarray] | None:
        """How var i taking value b changes the profile: (first check point, change from there), None if not at all."""
        k = self.kernel
        use = k.member_use[i]
        if not len(use):
            return None
        du = use[:, b] - use[:, self.values[i]]
        moved = du != 0
        if not moved.any():
            return None
        lo, hi, du = k.member_lo[i][moved], k.member_hi[i][moved], du[moved]
        start = int(lo.min())
        diff = np.zeros(int(hi.max()) - start + 1, dtype=self.profile.dtype)
        np.add.at(diff, lo - start, du)
        np.add.at(diff, hi - start, -du)
        return start, np.cumsum(diff[:-1])

    def move(self, i: int, b: int, change: tuple[int, np.ndarray] | None) -> None:
        if change is not None:
            start, delta = change
            self.profile[start:start + len(delta)] += delta
        self.values[i] = b
        self.cached.pop(i, None)
        for j, _ in self.kernel.neighbours[i]:
            self.cached.pop(j, None)

    def repair(self, deadline: float) -> bool:
        """Greedy: at the worst check point, the move of a var with a member live there that frees usage at
        the least cost per unit freed (no forbidden entry, no check point pushed over the limit or further
        over it), until the plan fits. False when stuck or out of time."""
        k = self.kernel
        if self.limit is None or not len(self.profile):
            return True
        starts = k.offset[:-1]
        while True:
            point = int(np.argmax(self.profile))
            over = int(self.profile[point]) - self.limit
            if over <= 0:
                return True
            if elapsed() > deadline:
                return False
            at_point = k.usage_at(point)
            current = at_point[starts + self.values]
            least = np.minimum.reduceat(at_point, starts)
            moves: list[tuple[float, int, int]] = []
            for i in np.flatnonzero(current > least):
                freed = current[i] - at_point[k.offset[i]:k.offset[i + 1]]
                total = self.totals(int(i))
                ok = (freed > 0) & (total < FORBIDDEN)
                if not ok.any():
                    continue
                ratio = np.full(len(total), np.inf)
                ratio[ok] = (total[ok] - total[self.values[i]]).astype(np.float64) / np.minimum(freed[ok], over)
                for b in np.argsort(ratio, kind="stable")[:min(2, int(ok.sum()))]:
                    moves.append((float(ratio[b]), int(i), int(b)))
            moves.sort()
            for _, i, b in moves[:64]:
                change = self.change(i, b)
                if change is None:
                    continue
                start, delta = change
                before = self.profile[start:start + len(delta)]
                if (before + delta <= np.maximum(before, self.limit)).all():
                    self.move(i, b, change)
                    break
            else:
                return False

    def polish(self, deadline: float, rng: random.Random, only: list[int] | None = None) -> None:
        """Single-var moves that lower the cost and keep the limit, in passes until none is left (or time);
        over the vars `only` where given."""
        k = self.kernel
        order = [i for i in (range(k.count) if only is None else only) if k.sizes[i] > 1]
        improved = True
        while improved:
            improved = False
            rng.shuffle(order)
            for n, i in enumerate(order):
                if n % 16 == 0 and elapsed() > deadline:
                    return
                total = self.totals(i)
                gain = total - total[self.values[i]]
                better = np.flatnonzero((gain < 0) & (total < FORBIDDEN))
                for b in better[np.argsort(gain[better], kind="stable")][:4]:
                    change = self.change(i, int(b))
                    if change is not None and self.limit is not None:
                        start, delta = change
                        if (self.profile[start:start + len(delta)] + delta > self.limit).any():
                            continue
                    self.move(i, int(b), change)
                    improved = True
                    break


# ---------------------------------------------------------------- the search


@dataclass
class Settings:
    time_limit: float
    seed: int
    memory: str  # "auto", "lagrangian" or "knapsack" (module docstring)
    search: str  # "auto", "hbfs" or "vns"
    round_seconds: float = 4.0  # toulbar2's slice per solve, at most
    verbose: bool = False  # a line per solve and round on stderr
    escalations: int = 3  # per Lagrangian round, solves with the penalties raised where the plan overflows
    theta: float = 1.0  # the first subgradient step's fraction of Polyak's
    lagrangian_share: float = 0.2  # of the time after the first solve, for the Lagrangian rounds (then the LNS)


class Peer:
    """The search around toulbar2 (module docstring), with the best feasible plan found."""

    def __init__(self, p: Problem, kernel: Kernel, settings: Settings) -> None:
        self.p = p
        self.kernel = kernel
        self.settings = settings
        self.deadline = settings.time_limit - RESERVE
        self.rng = random.Random(settings.seed)
        self.toulbar2 = Toulbar2(settings.search, settings.seed)
        self.best_cost: int | None = None
        self.best_values: np.ndarray | None = None
        self.best_profile = np.zeros(p.points, dtype=p.dtype)  # the best plan's usage profile
        self.last_values: np.ndarray | None = None  # toulbar2's last plan: the next solve's value hints
        self.solves = 0
        self.optimal = False  # the best plan is proven optimal
        self.rows: list[Row] = []  # knapsack rows given to toulbar2
        self.row_points: set[int] = set()
        # The check points whose live set is not inside the next one's (some node ends right after them):
        # the others' rows are implied by the next one's, and their multipliers stay 0.
        ends = np.bincount(p.hi[p.lo < p.hi], minlength=p.points + 1)
        self.kept = np.ones(p.points, dtype=bool)
        self.kept[:-1] = ends[1:p.points] > 0

    # -- plans

    def offer(self, values: np.ndarray) -> None:
        """Records a feasible kernel assignment if it is the cheapest so far."""
        cost = self.kernel.cost(values)
        if cost < FORBIDDEN and (self.best_cost is None or cost < self.best_cost):
            self.best_cost, self.best_values = cost, values.copy()
            self.best_profile = self.kernel.profile(values)
            print(f"t={elapsed():.2f} cost={cost}", flush=True)

    def consider(self, values: np.ndarray) -> KernelPlan:
        """Offers toulbar2's plan, or its greedy repair, and then its polish; returns the plan as it came."""
        plan = KernelPlan(self.kernel, values)
        limit = self.p.limit
        if not fits(self.p, plan.profile) and limit is not None and plan.profile.max() > REPAIR_RANGE * limit:
            return plan  # too far over for a greedy repair (it would take many seconds): left to the penalties
        fixed = plan if fits(self.p, plan.profile) else KernelPlan(self.kernel, values)
        if fixed is plan or fixed.repair(self.deadline):
            self.offer(fixed.values)
            fixed.polish(self.deadline, self.rng)
            self.offer(fixed.values)
        return plan

    # -- toulbar2

    def time_left(self) -> bool:
        return self.deadline - elapsed() >= 1.2

    def solve(self, multipliers: np.ndarray | None, hints: bool = True) -> tuple[np.ndarray | None, bool]:
        """toulbar2 on the kernel with these multipliers' penalties (None: none) and the knapsack rows so far;
        its value hints are the last plan it found (hints)."""
        p = self.p
        per_node = np.zeros(p.size)
        if multipliers is not None:
            prefix = np.concatenate([[0.0], np.cumsum(multipliers)])
            per_node = prefix[p.hi] - prefix[p.lo]  # the multipliers of the check points each node is live at
        began = elapsed()
        seconds = int(min(self.settings.round_seconds, max(1.0, self.deadline - began - 1.0)))
        hint = (self.last_values if self.last_values is not None else self.best_values) if hints else None
        network = self.kernel.network(self.kernel.penalised_unary(per_node), self.rows)
        values, proven = self.toulbar2.solve(network, seconds, hint, min(began + seconds + 1.0, self.deadline))
        self.solves += 1
        if values is not None:
            self.last_values = values
        if self.settings.verbose:
            found = "no plan" if values is None else f"plan {self.kernel.cost(values)}{' (optimal)' if proven else ''}"
            self.log(f"toulbar2 ({self.toulbar2.search}, {len(self.rows)} rows) {elapsed() - began:.2f} s: {found}")
        return values, proven

    def add_rows(self, profile: np.ndarray) -> int:
        """Knapsack rows for the kept check points the plan overflows (the worst ROWS_PER_ROUND); returns how many."""
        k, limit = self.kernel, self.p.limit
        assert limit is not None
        over = np.flatnonzero((profile > limit) & self.kept)
        over = over[np.argsort(-profile[over].astype(np.float64), kind="stable")][:ROWS_PER_ROUND]
        added = 0
        for point in over:
            if not self.time_left():
                break
            if int(point) in self.row_points:
                continue
            self.row_points.add(int(point))
            at_point = k.usage_at(int(point))
            scope = np.flatnonzero(np.add.reduceat(at_point > 0, k.offset[:-1]) > 0)
            coefficients = [at_point[k.offset[i]:k.offset[i + 1]].astype(np.int64) for i in scope]
            self.rows.append((scope, coefficients, limit))
            added += 1
        return added

    # -- the phases

    def run(self) -> None:
        p = self.p
        values: np.ndarray | None = None
        while values is None:  # the first plan, without penalties (vns after a solve that found none)
            if not self.time_left():
                return
            values, proven = self.solve(None)
            if values is None and self.toulbar2.search != "hbfs":
                self.toulbar2.search = "vns"
        if self.toulbar2.search == "auto":
            self.toulbar2.search = "hbfs" if proven else "vns"  # vns where hbfs cannot finish a solve
        plan = self.consider(values)
        if proven and fits(p, plan.profile):
            self.optimal = True  # no limit, or the unpenalised optimum fits it
            return
        if p.limit is None or not p.points:
            while self.time_left():  # no limit: toulbar2 until the time is up
                values, proven = self.solve(None)
                if values is not None:
                    self.consider(values)
            return
        overflows = int(((plan.profile > p.limit) & self.kept).sum())
        self.log(f"the unpenalised plan overflows {overflows} kept check points (of {int(self.kept.sum())}), "
                 f"its peak is {float(plan.profile.max()) / p.limit:.2f} times the limit")
        if self.settings.memory == "knapsack" or (self.settings.memory == "auto" and proven
                                                   and overflows <= KNAPSACK_OVERFLOWS):
            if self.knapsack_phase(plan) or self.settings.memory == "knapsack":
                return
        lagrangian_end = elapsed() + self.settings.lagrangian_share * (self.deadline - elapsed())
        self.lagrangian_phase(plan, lagrangian_end)
        if self.best_values is not None:
            self.neighbourhood_phase()
        else:
            self.lagrangian_phase(plan, self.deadline)

    def knapsack_phase(self, plan: KernelPlan) -> bool:
        """The limit as toulbar2's own linear constraints: knapsack rows for the check points the last plan
        overflowed, added each solve. True when a plan is proven optimal. In the auto mode it gives up (False)
        as soon as toulbar2 does not finish a solve within its slice."""
        while self.time_left():
            if not self.add_rows(plan.profile) and not fits(self.p, plan.profile):
                return False  # it overflows only where there are rows: toulbar2 broke one (not expected)
            values, proven = self.solve(None)
            if values is None or (not proven and self.settings.memory == "auto"):
                self.rows, self.row_points = [], set()
                return False
            plan = self.consider(values)
            if proven and fits(self.p, plan.profile):
                self.optimal = True
                return True
        return False

    def lagrangian_phase(self, plan: KernelPlan, end: float) -> None:
        """Rounds of: a subgradient step from toulbar2's last plan, toulbar2 on the penalised kernel, and up to
        `escalations` solves with the penalties raised where that plan overflows (the primal side)."""
        p, k = self.p, self.kernel
        assert p.limit is not None
        multipliers = np.zeros(p.points, dtype=np.float64)
        theta, best_dual, stall, rounds = self.settings.theta, -math.inf, 0, 0
        # where toulbar2 cannot finish a solve (vns), one escalation per round
        escalations = self.settings.escalations if self.toulbar2.search == "hbfs" else min(1, self.settings.escalations)
        if self.best_cost is None:
            self.memory_first(plan)
        while True:
            rounds += 1
            violation = plan.profile.astype(np.float64) - p.limit
            violation[~self.kept] = 0.0
            dual = float(k.cost(plan.values)) + float(multipliers @ violation)
            if dual > best_dual:
                best_dual, stall = dual, 0
            else:
                stall += 1
                if stall >= 3:
                    theta, stall = max(theta / 2, 1e-3), 0
            self.log(f"round {rounds}: over by {violation.max():.0f} at worst, value {dual:.0f}, theta {theta:g}")
            multipliers = self.step(multipliers, plan, theta, raise_only=False)
            escalated = multipliers
            for _ in range(escalations):
                if fits(p, plan.profile) or not self.time_left():
                    break
                escalated = self.step(escalated, plan, 1.0, raise_only=True)
                values, _ = self.solve(escalated)
                if values is None:
                    break
                plan = self.consider(values)
            if not self.time_left() or (elapsed() >= end and self.best_values is not None):
                return
            values, _ = self.solve(multipliers)
            if values is None:
                continue
            plan = self.consider(values)

    def neighbourhood_phase(self) -> None:
        """Large neighbourhood search from the best plan: some kernel vars around a random tight check point
        are freed (window), the others fixed, and toulbar2 solves the freed part exactly with the limit as
        knapsack rows (solve_neighbourhood). The neighbourhood grows by 15% after a solve that toulbar2
        finished without a better plan and shrinks by 30% after one it did not finish."""
        target = 24.0
        while self.time_left():
            assert self.best_values is not None
            freed, centre = self.window(target)
            began = elapsed()
            outcome = self.solve_neighbourhood(freed, centre)
            self.log(f"neighbourhood of {len(freed)} vars: {outcome} ({elapsed() - began:.2f} s)")
            if outcome == "unfinished":
                target = max(8.0, target * 0.7)
            elif outcome == "same":
                target = min(float(self.kernel.count), target * 1.15)

    def window(self, target: float) -> tuple[np.ndarray, int]:
        """A neighbourhood around a random tight kept check point (its centre, returned too): a random half of
        the target from the vars with a member live there, then random kernel neighbours of those freed, until
        `target` vars are freed."""
        p, k = self.p, self.kernel
        assert self.best_values is not None and p.limit is not None
        profile = self.best_profile
        kept = np.flatnonzero(self.kept)
        tight = kept[profile[kept] >= 0.95 * p.limit]
        centre = int(self.rng.choice(list(tight if len(tight) else kept)))
        nodes = np.flatnonzero((p.lo <= centre) & (p.hi > centre))
        live = [int(i) for i in np.unique(k.var_of[nodes]) if k.sizes[i] > 1]
        self.rng.shuffle(live)
        freed = set(live[:max(1, int(target) // 2)])
        frontier = list(freed)
        while frontier and len(freed) < target:
            i = frontier.pop(self.rng.randrange(len(frontier)))
            for j, _ in k.neighbours[i]:
                if j not in freed and k.sizes[j] > 1 and len(freed) < target:
                    freed.add(j)
                    frontier.append(j)
        return np.array(sorted(freed), dtype=np.int64), centre

    def solve_neighbourhood(self, freed: np.ndarray, centre: int) -> str:
        """toulbar2 (its branch and bound, 1 s) on the freed vars with the others fixed at the best plan: their
        costs against the fixed neighbours become unary, and knapsack rows hold the limit at the tight kept
        check points within NEAR of the centre where a freed var has a live member, then at the worst NEAR
        points its answer overflows (three solves at most). Returns "better" (the best plan moved), "same"
        (toulbar2 proved there is no better plan there) or "unfinished"."""
        p, k = self.p, self.kernel
        assert self.best_values is not None and p.limit is not None
        best = self.best_values
        position = np.full(k.count, -1, dtype=np.int64)
        position[freed] = np.arange(len(freed))
        unary, tables = [], []
        for n, i in enumerate(freed):
            total = k.base_flat[k.offset[i]:k.offset[i + 1]].copy()
            for j, table in k.neighbours[i]:
                if position[j] < 0:
                    total = saturating_add(total, table[:, best[j]])
                elif position[j] > n:
                    tables.append((n, int(position[j]), table))
            cost = total.astype(np.float64)
            cost[total >= FORBIDDEN] = np.inf
            unary.append(cost)
        sizes = k.sizes[freed]
        network = Network(sizes, grouped_unary(sizes, unary), grouped_tables(tables), [])
        profile = self.best_profile
        # the flat (member, value) entries of the freed vars, numbered within the neighbourhood
        local_offset = np.concatenate([[0], np.cumsum(sizes)])
        entries = np.flatnonzero(position[k.var_of[k.flat_node]] >= 0)
        entry_node = k.flat_node[entries]
        entry_var = position[k.var_of[entry_node]]
        entry_target = local_offset[entry_var] + (k.flat_target[entries] - k.offset[freed[entry_var]])
        entry_usage = k.flat_usage[entries]
        rows: set[int] = set()
        near = np.zeros(p.points, dtype=bool)
        near[max(0, centre - NEAR):centre + NEAR + 1] = True
        spans = np.zeros(p.points + 1, dtype=np.int64)  # where a freed var has a live member
        np.add.at(spans, p.lo[entry_node], 1)
        np.add.at(spans, p.hi[entry_node], -1)
        covered = np.cumsum(spans[:-1]) > 0
        points = [int(q) for q in np.flatnonzero(self.kept & near & covered & (profile >= 0.9 * p.limit))]
        for _ in range(3):
            for q in points:
                if not self.time_left():
                    return "unfinished"
                if q not in rows:
                    rows.add(q)
                    live = (p.lo[entry_node] <= q) & (p.hi[entry_node] > q)
                    weight = np.zeros(int(local_offset[-1]), dtype=p.dtype)
                    np.add.at(weight, entry_target[live], entry_usage[live].astype(p.dtype))
                    weights = [weight[local_offset[n]:local_offset[n + 1]] for n in range(len(freed))]
                    fixed = int(profile[q]) - sum(int(w[best[i]]) for w, i in zip(weights, freed))
                    scope = [n for n, w in enumerate(weights) if w.any()]
                    network.rows.append((np.array(scope, dtype=np.int64), [weights[n].astype(np.int64) for n in scope],
                                         p.limit - fixed))
            began = elapsed()
            if not self.time_left():
                return "unfinished"
            values, proven = self.toulbar2.solve(network, 1, best[freed], min(began + 2.0, self.deadline), "hbfs")
            self.solves += 1
            if values is None:
                return "unfinished"
            plan = KernelPlan(k, best, self.best_profile)
            for i, value in zip(freed, values):
                if value != best[i]:
                    plan.move(int(i), int(value), plan.change(int(i), int(value)))
            candidate = plan.values.copy()
            over = (plan.profile > p.limit) & self.kept
            if not over.any():
                cost = k.cost(candidate)
                if self.best_cost is not None and cost < self.best_cost:
                    self.offer(candidate)
                    around = {int(j) for i in freed for j, _ in k.neighbours[i]} - {int(i) for i in freed}
                    plan.polish(self.deadline, self.rng, sorted(around))
                    self.offer(plan.values)
                    return "better"
                return "same" if proven else "unfinished"
            worst = np.flatnonzero(over)
            points = [int(q) for q in worst[np.argsort(-plan.profile[worst].astype(np.float64))][:NEAR]]
        return "unfinished"

    def step(self, multipliers: np.ndarray, plan: KernelPlan, theta: float, raise_only: bool) -> np.ndarray:
        """A projected subgradient step of Polyak's size towards the best feasible cost (or 5% over the plan's
        cost before there is one); raise_only: from the overflows alone, so no multiplier falls."""
        assert self.p.limit is not None
        violation = plan.profile.astype(np.float64) - self.p.limit
        violation[~self.kept] = 0.0
        cost = float(self.kernel.cost(plan.values))
        value = cost + float(multipliers @ violation)
        if raise_only:
            violation = np.maximum(violation, 0.0)
        active = (multipliers > 0) | (violation > 0)
        norm = float(violation[active] @ violation[active])
        if norm == 0:
            return multipliers
        target = float(self.best_cost) if self.best_cost is not None else 1.05 * cost
        gap = max(target - value, 1e-3 * abs(target), 1.0)
        return np.maximum(0.0, multipliers + theta * gap / norm * violation)

    def memory_first(self, plan: KernelPlan) -> None:
        """A first plan that fits: one multiplier on every kept check point, large enough that usage outweighs
        the costs (100 times the plan's cost over the least-usage profile's sum), times 10 until a plan fits
        (as it is or repaired)."""
        p = self.p
        least = float((p.least_usage * (p.hi - p.lo)).sum())
        weight = 100.0 * max(float(self.kernel.cost(plan.values)), 1.0) / max(least, 1.0)
        for _ in range(3):
            if not self.time_left():
                return
            values, _ = self.solve(np.where(self.kept, weight, 0.0), hints=False)
            if values is None:
                return
            plan = self.consider(values)
            self.log(f"memory first: peak {float(plan.profile.max()) / p.limit:.2f} times the limit")
            if self.best_cost is not None:
                return
            weight *= 10

    def log(self, line: str) -> None:
        if self.settings.verbose:
            print(f"[{elapsed():.2f}] {line}", file=sys.stderr, flush=True)


def write_plan(path: str, plan: list[int]) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(plan, f)
        f.write("\n")
    os.replace(tmp, path)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description="A toulbar2 peer solver for IOPDDL problems, after the contest's first "
                                             "place (the module docstring says what it models).")
    ap.add_argument("problem", help="IOPDDL problem file (.json or .json.gz)")
    ap.add_argument("--time-limit", type=float, required=True, help="wall-clock seconds for the whole run")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--solution", help="write the best plan here (a JSON array, as synth --verify reads)")
    ap.add_argument("--memory", choices=["auto", "lagrangian", "knapsack"], default="auto",
                    help="how toulbar2 sees the usage limit (module docstring; default auto)")
    ap.add_argument("--search", choices=["auto", "hbfs", "vns"], default="auto",
                    help="toulbar2's search (auto: hbfs where it finishes the first solve in its slice, else vns)")
    ap.add_argument("--round-seconds", type=float, default=4.0, help="toulbar2's time per solve, at most")
    ap.add_argument("--escalations", type=int, default=3,
                    help="per Lagrangian round, solves with the penalties raised where the plan overflows")
    ap.add_argument("--theta", type=float, default=1.0, help="the first subgradient step's fraction of Polyak's")
    ap.add_argument("--lagrangian-share", type=float, default=0.2,
                    help="of the time after the first solve, the share of the Lagrangian rounds (then the LNS)")
    ap.add_argument("--verbose", action="store_true", help="a line per solve and round on stderr")
    args = ap.parse_args(argv)
    if args.time_limit <= 0:
        print(f"toulbar2_peer: --time-limit {args.time_limit} is not positive", file=sys.stderr)
        return 2
    settings = Settings(args.time_limit, args.seed, args.memory, args.search, args.round_seconds, args.verbose,
                        args.escalations, args.theta, args.lagrangian_share)
    try:
        p = load_problem(args.problem)
    except (OSError, EOFError, ValueError, KeyError, TypeError, IndexError) as e:
        print(f"toulbar2_peer: {args.problem}: not a readable IOPDDL problem ({type(e).__name__}: {e})", file=sys.stderr)
        return 2
    kernel = Kernel(p)
    peer: Peer | None = None
    if not kernel.infeasible:
        peer = Peer(p, kernel, settings)
        peer.run()
    if peer is None or peer.best_values is None:
        print("best none", flush=True)
        return 0
    plan = kernel.expand(peer.best_values)
    cost = plan_cost(p, plan)
    if cost != peer.best_cost or not fits(p, usage_profile(p, plan)):
        raise AssertionError(f"the expanded plan costs {cost}, not {peer.best_cost}, or does not fit")
    if args.solution:
        try:
            write_plan(args.solution, plan)
        except OSError as e:
            print(f"toulbar2_peer: --solution {args.solution}: {e.strerror}", file=sys.stderr)
            return 2
    if peer.optimal:
        print(f"toulbar2_peer: proven optimal ({peer.solves} toulbar2 solves)", file=sys.stderr)
    print(f"best {cost}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
