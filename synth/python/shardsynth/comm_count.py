"""PyTorch's own count of the collectives a run issues, with their bytes, in
the cost model's terms: `CollectiveCounter` is DTensor's CommDebugMode (which
counts every collective op DTensor issues), also taking each collective's
local buffer and group size from the op's arguments and turning them into
the bytes one rank sends in a ring collective, as costs::ring_bytes_sent
prices them: all_gather (n-1) L, reduce_scatter and all_to_all (n-1) L / n,
all_reduce 2 (n-1) L / n (L: the local buffer's bytes). These are op-level
figures: gloo carries some of them with more wire traffic (its
reduce-scatter is an all-reduce), which neither side counts.

    with CollectiveCounter() as counter:
        loss = model(ids).logits.sum()
    counter.by_kind()   # {"all_gather": (count, bytes), ...}
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any

import torch
from torch.distributed.tensor.debug import CommDebugMode

from .plan_run import in_unplanned

# Op packet name -> (kind, index of its group argument: size (int) or name (str)).
_KINDS = {
    "all_gather_into_tensor": "all_gather",
    "reduce_scatter_tensor": "reduce_scatter",
    "all_reduce": "all_reduce",
    "all_to_all_single": "all_to_all",
    "shard_dim_alltoall": "all_to_all",
}


def ring_bytes(kind: str, n: int, local: int) -> int:
    if n <= 1:
        return 0
    if kind == "all_gather":
        return (n - 1) * local
    if kind in ("reduce_scatter", "all_to_all"):
        return (n - 1) * local // n
    if kind == "all_reduce":
        return 2 * (n - 1) * local // n
    raise ValueError(kind)


def _group_size(args: tuple) -> int:
    from torch.distributed.distributed_c10d import _resolve_process_group

    name = next(a for a in reversed(args) if isinstance(a, str))
    return _resolve_process_group(name).size()


class CollectiveCounter(CommDebugMode):
    """CommDebugMode that also keeps (kind, group size, local bytes) of every collective,
    apart for those issued under plan_run.unplanned() (the outputs gathered whole).

    On a CPU mesh DTensor has no all-to-all (gloo lacks one): its move of a shard from
    one dim to another (`shard_dim_alltoall`) gathers the whole dim and keeps a chunk.
    The counter records that one collective as the all_to_all it stands for, its bytes
    the ring all-to-all's on the same buffer; `lowered` keeps what was sent instead
    (all_gather, (n-1) L bytes)."""

    def __init__(self) -> None:
        super().__init__()
        self.lowered: list = []     # (group size, bytes sent) of the all-gathers standing for an all-to-all
        self._in_alltoall = False
        self.shapes: list = []      # (kind, group size, local shape) of each, for reading a mismatch
        self.records: list = []     # (kind, group size, ring bytes sent) of each planned collective
        self.unplanned: list = []   # the same for the outputs' gathers
        self.other: list = []       # op names of collectives with no kind here (broadcast, scatter ...)

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: Any = None) -> Any:
        before = self.get_total_counts()
        out = super().__torch_dispatch__(func, types, args, kwargs)
        if out is NotImplemented or self.get_total_counts() == before:
            return out
        name = func._overloadpacket.__name__
        kind = _KINDS.get(name)
        if kind is None:
            self.other.append(name)
            return out
        local = args[0].numel() * args[0].element_size()
        n = _group_size(args)
        if self._in_alltoall and kind == "all_gather":
            self.lowered.append((n, ring_bytes("all_gather", n, local)))
            kind = "all_to_all"
        (self.unplanned if in_unplanned() else self.records).append((kind, n, ring_bytes(kind, n, local)))
        self.shapes.append((kind, n, tuple(args[0].shape)))
        return out

    def __enter__(self) -> "CollectiveCounter":
        import torch.distributed.tensor._collective_utils as utils
        import torch.distributed.tensor.placement_types as placement_types

        self._saved = utils.shard_dim_alltoall
        counter = self

        def shard_dim_alltoall(*args: Any, **kwargs: Any) -> Any:
            counter._in_alltoall = True
            try:
                return counter._saved(*args, **kwargs)
            finally:
                counter._in_alltoall = False

        utils.shard_dim_alltoall = placement_types.shard_dim_alltoall = shard_dim_alltoall
        return super().__enter__()

    def __exit__(self, *args: Any) -> None:
        import torch.distributed.tensor._collective_utils as utils
        import torch.distributed.tensor.placement_types as placement_types

        utils.shard_dim_alltoall = placement_types.shard_dim_alltoall = self._saved
        super().__exit__(*args)

    def by_kind(self) -> dict:
        """kind -> (count, bytes one rank sends), over the planned collectives."""
        out: dict = defaultdict(lambda: [0, 0])
        for kind, _, sent in self.records:
            out[kind][0] += 1
            out[kind][1] += sent
        return {k: tuple(v) for k, v in sorted(out.items())}


def predicted_by_kind(rows: list, phase: str) -> dict:
    """kind -> (count, bytes) of shardsynth.collectives rows of one phase."""
    out: dict = defaultdict(lambda: [0, 0])
    for row in rows:
        if row["phase"] == phase:
            out[row["kind"]][0] += 1
            out[row["kind"]][1] += row["bytes"]
    return {k: tuple(v) for k, v in sorted(out.items())}


def bias_in_partial_sum(rows: list, graph: dict, schedule: dict) -> list:
    """The priced rows no DTensor run sends: the gradient sync of a 1-D parameter (a bias)
    of an op whose output is a pending partial sum (a row-parallel layer). The cost model
    prices that gradient as partial over the contracted axes (the bias joins one summand,
    as shard-run adds it on one rank), so an all-reduce; DTensor adds the replicated bias to
    the partial sum as its own Replicate -> Partial split, whose gradient is the output's
    resolved, replicated gradient: nothing is sent."""
    partial = {e["tensor"]: _partial_axes(e["spec"]) for e in schedule.get("specs", []) if "+P" in e["spec"]}
    biases = {f"{n['name']}.{p['name']}": partial[n["name"]] for n in graph["nodes"] if n["name"] in partial
              for p in n.get("params", []) if len(p["shape"]) == 1}
    # its reduction over the output's partial axes (over a sharded batch it is sent; a stored bias' second gather too)
    return [r for r in rows if r["phase"] == "backward" and r["axis"] in biases.get(r["tensor"], ())
            and "+P" in r["move"].split("->")[0]]


def _partial_axes(spec: str) -> tuple:
    """The mesh axes of a spec text's pending partial sum ('+P' alone: axis 0 of a 1-D mesh)."""
    text = spec.partition("+P")[2]
    return tuple(int(c) for c in text) if text else (0,)
