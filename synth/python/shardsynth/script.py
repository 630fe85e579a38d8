"""A plan as a readable PyTorch script, for users who want to see or edit it.

    print(parallelize_script(plan, graph))

The script defines `apply(model, mesh)`: on a 1-D mesh the nn.Linear layers
that Megatron's vocabulary covers go through torch's parallelize_module with
ColwiseParallel / RowwiseParallel (their outputs as the plan has them: a
column-parallel output stays sharded, a row-parallel one is all-reduced);
every other parameter (replicated ones too, so that every parameter is a
DTensor) is placed with distribute_tensor in the placement the plan stores
it in, and a tied parameter is pointed at the one it shares. The activations' reshardings are listed as comments, one
per `sync` directive.
"""
from __future__ import annotations

from typing import Union

from .plan import PlanError, load_schedule, placements, spec_table, stored_spec
from .tp_plan import linear_styles

_HEADER = '''# Written by shardsynth from a plan for mesh {mesh} ({mode}, cost {cost} {unit}{proven}).
import torch
from torch.distributed.tensor import Partial, Replicate, Shard, distribute_tensor
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module
from torch.distributed.tensor.placement_types import _StridedShard


def place(model, name, mesh, placements):
    """Replaces parameter `name` by a DTensor in `placements`."""
    owner, _, attr = name.rpartition(".")
    module = model.get_submodule(owner)
    old = getattr(module, attr)
    module.register_parameter(attr, torch.nn.Parameter(distribute_tensor(old.detach(), mesh, placements)))


def tie(model, name, to):
    """Points parameter `name` at parameter `to` (a tied head shares the embedding's DTensor)."""
    owner, _, attr = name.rpartition(".")
    setattr(model.get_submodule(owner), attr, model.get_parameter(to))


def apply(model, mesh):
'''


def _placement_text(place: list) -> str:
    def one(p: object) -> str:
        name = type(p).__name__
        if name == "_StridedShard":
            return f"_StridedShard({p.dim}, split_factor={p.split_factor})"
        if name == "Shard":
            return f"Shard({p.dim})"
        return f"{name}()"

    return "[" + ", ".join(one(p) for p in place) + "]"


def _megatron_linears(schedule: dict, graph: dict) -> dict:
    """The 1-D plan's Linear styles when every sharded parameter is such a Linear weight, else {}."""
    try:
        return linear_styles(schedule, graph) if len(schedule["mesh"]) == 1 else {}
    except PlanError:
        return {}


def parallelize_script(plan: Union[dict, str], graph: dict) -> str:
    """The Python source described above."""
    schedule = load_schedule(plan)
    rank = len(schedule["mesh"])
    specs = spec_table(schedule, rank)
    styles = _megatron_linears(schedule, graph)
    lines = [_HEADER.format(mesh="x".join(map(str, schedule["mesh"])), mode=schedule.get("mode", "inference"),
                            cost=schedule.get("cost"), unit="ns" if schedule.get("cost_model") == "alpha-beta"
                            else "elements", proven=", proven optimal" if schedule.get("proven_optimal") else "")]
    if styles:
        lines.append("    parallelize_module(model, mesh, {")
        for path, style in sorted(styles.items()):
            lines.append(f'        "{path}": {"ColwiseParallel" if style == "colwise" else "RowwiseParallel"}(),')
        lines.append("    })")
    ties = []
    for node in graph["nodes"]:
        for p in node.get("params", []):
            fqn = f"{node['name']}.{p['name']}"
            if "tied_to" in p:
                ties.append(f'    tie(model, "{fqn}", "{p["tied_to"]}")')
            elif node["name"] not in styles:
                place = placements(stored_spec(specs, fqn), len(p["shape"]), rank)
                lines.append(f'    place(model, "{fqn}", mesh, {_placement_text(place)})')
    lines.extend(ties)
    syncs = [d for d in schedule.get("directives", []) if d.get("kind") == "sync"]
    if syncs:
        lines.append("    # The plan's activation reshardings (Slapo's .sync), at these nodes:")
        for d in syncs:
            arg = f", arg {d['arg']}" if "arg" in d else ""
            lines.append(f"    #   {d['node']} ({d['mode']}{arg}): {d['sync_op_or_fn']}")
    lines.append("    return model")
    return "\n".join(lines) + "\n"
