"""Replay a plan's directives onto a real Slapo schedule (slapo.create_schedule).

    sch = slapo.create_schedule(model)
    replay_on_slapo(plan, sch)          # sch["fc1"].shard("weight", axis=0), sch["fc2"].sync(...)
    model, _ = slapo.build(sch, init_weights=False)

shardsynth's directives are Slapo's vocabulary on a 1-D mesh: a `shard`
becomes `.shard(param, axis=dim)`, and a `sync` FROM->TO becomes the one
collective that turns FROM into TO: a pending partial sum resolved is
"all_reduce" (or "reduce_scatter" onto a sharded dim), a sharded dim made
whole is "all_gather" on that axis, a whole dim cut is "scatter" after a
module (Slapo takes no string for it before one: there it is a hook that
keeps this rank's part). Anything else (a 2-D mesh, a blocked shard, a sync
that is two collectives) raises PlanError naming the directive.
"""
from __future__ import annotations

from typing import Any, Union

from .plan import PlanError, Spec, load_schedule, parse_spec


def _sync_op(mode: str, source: Spec, target: Spec, ndim: int) -> tuple:
    """(Slapo's sync_op_or_fn, axis) for one resharding of a tensor of `ndim` dims."""
    offset = ndim - len(source.dims)
    moved = [i for i, (a, b) in enumerate(zip(source.dims, target.dims)) if a != b]
    if source.partial and not target.partial and not moved:
        return "all_reduce", None
    if source.partial and not target.partial and len(moved) == 1 and target.dims[moved[0]]:
        return "reduce_scatter", offset + moved[0]
    if not source.partial and not target.partial and len(moved) == 1:
        dim = moved[0]
        if source.dims[dim] and not target.dims[dim]:
            return "all_gather", offset + dim
        if not source.dims[dim] and target.dims[dim]:
            return ("scatter" if mode == "fwd_post" else _keep_local(offset + dim)), offset + dim
    return None, None


def _keep_local(dim: int) -> Any:
    """A fwd_pre hook that keeps this rank's part of the first input along `dim`."""
    import torch.distributed as dist

    def hook(module: Any, inputs: tuple) -> tuple:
        x = inputs[0]
        part = x.chunk(dist.get_world_size(), dim)[dist.get_rank()].contiguous()
        return (part, *inputs[1:])

    return hook


def replay_on_slapo(plan: Union[dict, str], sch: Any, graph: dict) -> list:
    """Applies every directive to `sch`; returns the calls made, as Slapo source lines."""
    schedule = load_schedule(plan)
    if len(schedule.get("mesh", [])) != 1:
        raise PlanError("plan for a 2-D mesh: Slapo's directives shard over one group")
    shapes = {n["name"]: len(n["shape"]) for n in graph["nodes"]}
    inputs = {n["name"]: n.get("inputs", []) for n in graph["nodes"]}
    calls = []
    for d in schedule.get("directives", []):
        node = d["node"]
        if d["kind"] == "shard":
            if d.get("blocks", 1) != 1:
                raise PlanError(f"directive shard {node}.{d['param']}: a blocked shard has no Slapo counterpart")
            sch[node].shard(d["param"], axis=d["dim"])
            calls.append(f'sch["{node}"].shard("{d["param"]}", axis={d["dim"]})')
            continue
        source_text, _, target_text = d["sync_op_or_fn"].partition("->")
        tensor = inputs[node][int(d.get("arg", 0))] if d["mode"] == "fwd_pre" else node
        op, axis = _sync_op(d["mode"], parse_spec(source_text, 1), parse_spec(target_text, 1), shapes[tensor])
        if op is None:
            raise PlanError(f"directive sync {node} ({d['mode']}) {d['sync_op_or_fn']}: not one Slapo collective")
        kwargs = {} if axis is None else {"axis": axis}
        sch[node].sync(mode=d["mode"], sync_op_or_fn=op, **kwargs)
        name = op if isinstance(op, str) else f"keep_local(dim={axis})"
        calls.append(f'sch["{node}"].sync(mode="{d["mode"]}", sync_op_or_fn={name!r}'
                     + (f", axis={axis})" if axis is not None and isinstance(op, str) else ")"))
    return calls
