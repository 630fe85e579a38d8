#!/usr/bin/env python3
"""Writes one problem of the IOPDDL contest family (bench/devset/README.md
gives the design and the statistics it follows, measured on A, M and S).

The graph is an XLA-like operator graph on a 2-D device mesh [D1, D2]:
a backbone of operators in topological order, each consuming the previous
operator, now and then an older one (a residual), 1 to 3 leaf operands
(constants, broadcasts, reshapes: short-lived or empty intervals, few
strategies) and sometimes a weight (live for the whole step); a few hubs
feed many operators. Each tensor of rank r has the sharding specs of a 2-D
mesh: replicated, one axis over mesh dimension 0, 1 or both, or two axes
over one dimension each (1 + 3r + r(r-1) specs, some dropped). A spec's
usage is the tensor's size over its shard factor. An edge's table is free
where the consumer's operand spec is the producer's spec carried through
the operator's axis map, and priced by the bytes resharded elsewhere
(slicing to a finer spec is cheap, gathering is not); about half of the
edges are functional: one producer strategy allowed per consumer strategy,
every other entry forbidden (in A, M, S every forbidden entry lies in such
an edge). Operators' node costs are compute
over the shard factor plus a reduction where a contracted axis is sharded;
most entries are zero. The usage limit is a factor above the least
possible peak (1.1 in A, M, S, B and G).

With --free slicing, the free entries are those where the consumer's spec
splits at least what the carried spec splits (a local slice); without it,
12% of the mismatched entries are free at random (the first recipe, which
leaves 30% of the consumer's strategies without a free producer strategy,
where the contest files have 0.1-6%: bench/devset/README.md).

usage: bench/devset/generate.py --seed N --nodes N [--limit-factor 1.1] [--functional 1.0] [--free random|slicing] OUT.json"""
from __future__ import annotations

import argparse
import json
import math
import random
import sys
from dataclasses import dataclass, field

FORBIDDEN = 10**18
MESHES = [(4, 8), (2, 16), (8, 8), (4, 16)]


@dataclass
class Spec:
    """One sharding spec: per tensor axis, the mesh dimensions it is split over (a bitmask)."""

    split: tuple[int, ...]  # per axis: 0 none, 1 mesh dim 0, 2 mesh dim 1, 3 both

    def factor(self, mesh: tuple[int, int]) -> int:
        f = 1
        for m in self.split:
            f *= (mesh[0] if m & 1 else 1) * (mesh[1] if m & 2 else 1)
        return f


def all_specs(rank: int) -> list[Spec]:
    specs = [Spec((0,) * rank)]
    for a in range(rank):
        for m in (1, 2, 3):
            specs.append(Spec(tuple(m if i == a else 0 for i in range(rank))))
    for a in range(rank):
        for b in range(rank):
            if a != b:
                specs.append(Spec(tuple(1 if i == a else 2 if i == b else 0 for i in range(rank))))
    return specs


@dataclass
class Node:
    """One tensor: its specs and the data of the problem file."""

    rank: int  # tensor rank
    size: int  # usage when replicated
    specs: list[Spec]  # the strategies
    start: int  # first live step
    end: int  # one past the last live step (== start: never live)
    costs: list[int] = field(default_factory=list)  # per strategy


class Family:
    def __init__(self, seed: int, functional: float, free_slicing: bool = False) -> None:
        self.rng = random.Random(seed)
        # Which entries off the carried spec are free: with free_slicing, those where the consumer's spec
        # is a finer one (a local slice, as in XLA's tables); without, 12% of them at random (the first recipe).
        self.free_slicing = free_slicing
        self.mesh = self.rng.choice(MESHES)
        self.functional_scale = functional
        self.nodes: list[Node] = []
        self.edges: list[tuple[int, int]] = []
        self.tables: list[list[int]] = []
        self.functional: list[bool] = []  # per edge: whether it allows one strategy of u per strategy of v
        self.step = 0

    def specs(self, rank: int) -> list[Spec]:
        keep = [s for i, s in enumerate(all_specs(rank)) if i == 0 or self.rng.random() < 0.8]
        self.rng.shuffle(keep)
        return keep

    def node(self, rank: int, size: int, live: int | None, compute: float, like: int = -1) -> int:
        """A tensor; with `like`, it takes that node's rank and specs (in another order)."""
        r = self.rng
        if like >= 0:
            rank = self.nodes[like].rank
            specs = list(self.nodes[like].specs)
            r.shuffle(specs)
        else:
            specs = self.specs(rank)
        start = self.step
        end = start if live is None else start + live
        n = Node(rank, size, specs, start, end)
        contracted = r.randrange(rank) if rank else -1
        reduce_cost = compute * 10 ** r.uniform(-1.5, 0.5)
        for s in specs:
            if compute <= 0:
                n.costs.append(0)
                continue
            c = compute / s.factor(self.mesh)
            if contracted >= 0 and s.split[contracted]:
                c += reduce_cost
            n.costs.append(max(1, int(c)))
        if compute > 0 and len(specs) > 1:
            for i in range(1, len(specs)):
                if r.random() < 0.03:
                    n.costs[i] = FORBIDDEN
        self.nodes.append(n)
        return len(self.nodes) - 1

    def edge(self, u: int, v: int, functional: bool, bijective: bool = False) -> None:
        """u feeds v: v's axes take u's axes through a random map (an axis may be contracted away).
        A functional edge allows one strategy of u per strategy of v (the operand spec v needs),
        as XLA's tables do for about half of the edges: then u follows v."""
        r = self.rng
        a, b = self.nodes[u], self.nodes[v]
        image = list(range(b.rank)) + [-1] * max(0, a.rank - b.rank)
        r.shuffle(image)
        image = image[:a.rank]
        scale = 10 ** r.uniform(0.5, 2.5)
        table = []
        for s in a.specs:
            carried = [0] * b.rank
            for i, m in enumerate(s.split):
                if image[i] >= 0:
                    carried[image[i]] = m
            for t in b.specs:
                if self.free_entry(tuple(carried), t.split):  # free: no data moves
                    table.append(0)
                else:  # slicing to a finer spec is cheap; gathering to a coarser one moves the bytes
                    fs, ft = s.factor(self.mesh), t.factor(self.mesh)
                    moved = a.size / ft * (0.05 if fs < ft else 1.0) + (a.size / fs if fs > ft else 0.0)
                    table.append(max(1, int(scale * moved * r.uniform(0.5, 1.5))))
        cols = len(b.specs)
        if bijective:  # the same specs on both ends: only equal ones go together
            table = [0 if s.split == t.split else FORBIDDEN for s in a.specs for t in b.specs]
            self.edges.append((u, v))
            self.tables.append(table)
            self.functional.append(True)
            return
        if functional:
            for j in range(cols):
                allowed = [i for i in range(len(a.specs)) if table[i * cols + j] == 0] or \
                    [i for i in range(len(a.specs)) if table[i * cols + j] < FORBIDDEN] or [r.randrange(len(a.specs))]
                keep = allowed[0] if table[allowed[0] * cols + j] == 0 else r.choice(allowed)
                for i in range(len(a.specs)):
                    if i != keep:
                        table[i * cols + j] = FORBIDDEN
                    elif table[i * cols + j] >= FORBIDDEN:
                        table[i * cols + j] = int(scale * a.size)
            self.edges.append((u, v))
            self.tables.append(table)
            self.functional.append(True)
            return
        self.edges.append((u, v))
        self.tables.append(table)
        self.functional.append(False)

    def free_entry(self, carried: tuple[int, ...], target: tuple[int, ...]) -> bool:
        """Whether the consumer's spec `target` costs nothing from the producer's spec carried to its axes."""
        if self.free_slicing:  # target splits at least what carried splits: each device slices its own part
            return all(c & ~t == 0 for c, t in zip(carried, target))
        return carried == target or self.rng.random() < 0.12

    def leaf(self, weight: bool, like: int = -1) -> int:
        r = self.rng
        if like >= 0:  # a broadcast or constant shaped like its consumer: the edge is a bijection
            live = None if r.random() < 0.2 else 1
            leaf = self.node(0, int(10 ** r.uniform(2.5, 6.5)), live, 0, like)
            return leaf
        if weight:
            rank = r.choice([1, 2, 2, 3])
            if r.random() < 0.5:  # live from the step's start
                self.step, created = 0, self.step
                w = self.node(rank, int(10 ** r.uniform(3.5, 6.5)), 10**9, 0)
                self.step = created
                return w
            return self.node(rank, int(10 ** r.uniform(3.5, 6.5)), 10**9, 0)
        rank = r.choice([0, 1, 1, 2, 2, 3])
        live = None if r.random() < 0.2 else r.choice([1, 1, 2, 3])
        leaf = self.node(rank, int(10 ** r.uniform(2.5, 6.5)), live, 0)
        self.step += live is not None and r.random() < 0.3
        return leaf

    def operator(self, where: float, like: int = -1) -> int:
        """An operator `where` of the way through the graph: its tensor is larger inside the bulges.
        With `like`, an elementwise operator on that one: the same specs."""
        r = self.rng
        rank = r.choice([2, 2, 3, 3, 4])
        compute = 10 ** r.uniform(0, 8) if r.random() < (0.3 if like >= 0 else 0.6) else 0
        bulge = 1 + sum(h * math.exp(-((where - c) / w) ** 2) for c, w, h in self.bulges)
        return self.node(rank, int(bulge * 10 ** r.uniform(4, 7.5)), 1, compute, like)

    def build(self, target: int) -> None:
        r = self.rng
        # Where the graph's tensors grow (a few stages of the model): centre, width, height.
        self.bulges = [(r.random(), r.uniform(0.02, 0.15), r.uniform(2, 12)) for _ in range(r.randint(1, 3))]
        hubs = [self.node(1, int(10 ** r.uniform(3, 5)), 10**9, 0) for _ in range(r.randint(1, 4))]
        self.step += 1
        backbone = [self.operator(0.0)]
        while len(self.nodes) < target:
            operands = [self.leaf(weight=r.random() < 0.14) for _ in range(r.choice([0, 1, 1, 2, 2]))]
            self.step += 1
            elementwise = r.random() < 0.55
            op = self.operator(len(self.nodes) / target, backbone[-1] if elementwise else -1)
            if r.random() < 0.5:
                operands.append(self.leaf(False, like=op))
                mirrored = operands[-1]
            else:
                mirrored = -1
            self.step += r.random() < 0.9
            self.use(backbone[-1], op, 0.15, bijective=elementwise)
            if len(backbone) > 8 and r.random() < 0.25:  # a residual from an older operator
                self.use(backbone[-r.randint(2, 8)], op, 0.1)
            if len(backbone) > 8 and r.random() < 0.12:  # a tensor kept for long (a cache, a skip over stages)
                self.use(backbone[-r.randint(2, max(2, int(0.4 * len(backbone))))], op, 0.1)
            for leaf in operands:
                self.use(leaf, op, 0.15, bijective=leaf == mirrored)
            if r.random() < 0.6:
                self.use(r.choice(hubs), op, 0.0)
            backbone.append(op)
        end = self.step + 1
        for n in self.nodes:
            n.end = min(n.end, end)

    def use(self, u: int, v: int, functional: float, bijective: bool = False) -> None:
        """u feeds v: an edge (functional with that probability, or bijective), and u lives until v's step."""
        self.edge(u, v, self.rng.random() < functional * self.functional_scale, bijective)
        n = self.nodes[u]
        if n.end > n.start:
            n.end = max(n.end, self.nodes[v].start + 1)

    def peak(self, pick: list[int]) -> int:
        delta = [0] * (self.step + 3)
        for n, s in zip(self.nodes, pick):
            if n.end > n.start:
                u = n.size // n.specs[s].factor(self.mesh)
                delta[n.start] += u
                delta[n.end] -= u
        run = best = 0
        for d in delta:
            run += d
            best = max(best, run)
        return best

    def document(self, name: str, limit_factor: float) -> dict:
        least = []  # ties by spec, so that a bijective edge's ends agree
        for n in self.nodes:
            allowed = [i for i in range(len(n.specs)) if n.costs[i] < FORBIDDEN]
            least.append(min(allowed, key=lambda i: (n.size // n.specs[i].factor(self.mesh), n.specs[i].split)))
        for (u, v), table, functional in zip(self.edges, self.tables, self.functional):
            cols = len(self.nodes[v].specs)  # the least-usage plan keeps every edge
            k = least[u] * cols + least[v]
            if table[k] < FORBIDDEN:
                continue
            if functional:  # u's one strategy for v's least becomes u's least
                for i in range(len(self.nodes[u].specs)):
                    table[i * cols + least[v]] = FORBIDDEN
            table[k] = self.nodes[u].size
        limit = int(limit_factor * self.peak(least))
        return {"problem": {
            "name": name,
            "nodes": {"intervals": [[n.start, n.end] for n in self.nodes],
                      "costs": [n.costs for n in self.nodes],
                      "usages": [[n.size // s.factor(self.mesh) for s in n.specs] for n in self.nodes]},
            "edges": {"nodes": [list(e) for e in self.edges], "costs": self.tables},
            "usage_limit": limit}}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--nodes", type=int, required=True)
    ap.add_argument("--limit-factor", type=float, default=1.1, help="the limit over the least possible peak")
    ap.add_argument("--functional", type=float, default=1.0,
                    help="scales the chance that an edge is functional (one allowed strategy of the producer per "
                         "strategy of the consumer; the only forbidden entries)")
    ap.add_argument("--free", choices=["random", "slicing"], default="random",
                    help="which entries off the carried spec are free: 12%% of them at random (the first recipe), or "
                         "those where the consumer's spec is a finer one, a local slice (as in the contest's tables)")
    ap.add_argument("out")
    a = ap.parse_args()
    if a.nodes < 10 or a.limit_factor < 1.0 or not 0 <= a.functional <= 1.3:
        print(f"generate.py: bad arguments --nodes {a.nodes} --limit-factor {a.limit_factor} --functional {a.functional}",
              file=sys.stderr)
        return 2
    f = Family(a.seed, a.functional, a.free == "slicing")
    f.build(a.nodes)
    doc = f.document(f"family-{a.seed}-{a.nodes}-{a.limit_factor}", a.limit_factor)
    with open(a.out, "w") as out:
        json.dump(doc, out, separators=(",", ":"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
