"""A shardsynth plan (docs/schedule_json.md) as PyTorch sees it: spec text ->
DTensor placements, and the checks that a plan fits a model and a mesh.

Every check runs before anything is changed, and a failure is one line
(PlanError) naming the value."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Union

import torch

_TOKEN = re.compile(r"R|S(\d*)(?:\((\d+)\))?")


class PlanError(ValueError):
    """A plan that does not fit the model or the mesh; one line naming the value."""


@dataclass(frozen=True)
class Spec:
    """A parsed spec: per described dim (the tensor's last ones) its mesh axes
    (major first) and block count, and the mesh axes of a pending partial sum."""

    dims: tuple      # per described dim: tuple of mesh axes sharding it, major first
    blocks: tuple    # per described dim: equal blocks it is sharded within (1 = plain)
    partial: tuple   # mesh axes holding a pending partial sum, ascending


def parse_spec(text: str, mesh_rank: int) -> Spec:
    """'RS', 'S0RS1', 'RS1(3)', 'RR+P0' -> Spec (docs/schedule_json.md "Spec text")."""
    body, _, partial_text = text.partition("+P")
    dims, blocks, at = [], [], 0
    while at < len(body):
        m = _TOKEN.match(body, at)
        if not m or m.end() == at:
            raise PlanError(f"spec '{text}': cannot read '{body[at:]}'")
        if m.group(0) == "R":
            dims.append(())
        else:
            axes = tuple(int(c) for c in m.group(1)) if m.group(1) else (0,)
            if mesh_rank > 1 and not m.group(1):
                raise PlanError(f"spec '{text}': a sharded dim names no mesh axis on a {mesh_rank}-D mesh")
            if any(a >= mesh_rank for a in axes):
                raise PlanError(f"spec '{text}': names a mesh axis outside a {mesh_rank}-D mesh")
            dims.append(axes)
        blocks.append(int(m.group(2)) if m.group(2) else 1)
        at = m.end()
    partial: tuple = ()
    if "+P" in text:
        partial = tuple(int(c) for c in partial_text) if partial_text else (0,)
    return Spec(tuple(dims), tuple(blocks), partial)


def placements(spec: Spec, ndim: int, mesh: Any) -> list:
    """DTensor placements, one per mesh axis, of a tensor of `ndim` dims laid out as `spec` on a
    mesh of shape `mesh` (reshard.placements: a dim sharded over several axes in synth's axis
    order, a blocked dim such as GPT-2's fused q|k|v, are _StridedShards). With a mesh rank
    (an int) instead of its shape, the axes of a dim are taken in mesh order."""
    from .reshard import placements as laid_out

    return laid_out(spec, ndim, (1,) * mesh if isinstance(mesh, int) else tuple(int(n) for n in mesh))


def load_schedule(plan: Union[dict, str]) -> dict:
    """The schedule dict of: solve()'s result, a schedule dict, or a schedule JSON file's path."""
    if isinstance(plan, str):
        try:
            with open(plan) as f:
                plan = json.load(f)
        except (OSError, json.JSONDecodeError) as e:
            raise PlanError(f"{plan}: cannot read the schedule ({e})") from None
    if isinstance(plan, dict) and "schedule" in plan and "directives" in plan:
        plan = plan["schedule"]
    if not isinstance(plan, dict) or plan.get("format") != "shardsynth.schedule/1":
        raise PlanError("plan: not a shardsynth schedule (format 'shardsynth.schedule/1')")
    if plan.get("stages"):
        raise PlanError("plan: a pipeline-staged schedule, which parallelize does not take")
    return plan


def check_mesh(schedule: dict, mesh: Any) -> None:
    """The mesh's shape must be the plan's, and its size the world size."""
    want = [int(n) for n in schedule.get("mesh", [])]
    shape = [int(n) for n in mesh.shape]
    if shape != want:
        raise PlanError(f"mesh {'x'.join(map(str, shape))} does not match the plan's mesh {'x'.join(map(str, want))}")
    if torch.distributed.is_initialized() and mesh.size() != torch.distributed.get_world_size():
        raise PlanError(f"mesh of {mesh.size()} devices does not match the world size "
                        f"{torch.distributed.get_world_size()}")


def spec_table(schedule: dict, mesh_rank: int) -> dict:
    """Tensor name (node, node.param, node.param:stored ...) -> Spec."""
    return {entry["tensor"]: parse_spec(entry["spec"], mesh_rank) for entry in schedule.get("specs", [])}


def stored_spec(specs: dict, fqn: str) -> Spec:
    """The spec a parameter is kept in between steps: its `:stored` entry, else its use."""
    if fqn + ":stored" in specs:
        return specs[fqn + ":stored"]
    if fqn not in specs:
        raise PlanError(f"plan for another graph: the model's parameter '{fqn}' has no spec in it")
    return specs[fqn]
