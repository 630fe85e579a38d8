"""A plan in Hugging Face's tensor-parallel vocabulary (a model's `tp_plan`:
module pattern -> "colwise" | "rowwise"), where it can be said in it.

    to_tp_plan(plan, graph) == {"model.layers.*.self_attn.q_proj": "colwise", ...}

The vocabulary is Megatron's on a 1-D mesh: an nn.Linear whose weight
([out, in]) is stored sharded on dim 0 is "colwise", on dim 1 "rowwise";
replicated modules are left out (Hugging Face's default). Anything else (a
2-D mesh, another sharded parameter, a weight stored apart from its use as
FSDP and ZeRO plans do, a blocked shard) raises PlanError naming the first
tensor that cannot be said. Layers that agree collapse to a `*` pattern.
"""
from __future__ import annotations

import re
from typing import Union

from .plan import PlanError, Spec, load_schedule, spec_table

_STYLES = {((0,), ()): "colwise", ((), (0,)): "rowwise"}  # weight [out, in] dims' mesh axes -> style


def linear_styles(schedule: dict, graph: dict) -> dict:
    """Module path -> "colwise" / "rowwise" for every sharded nn.Linear; PlanError for anything else."""
    if len(schedule.get("mesh", [])) != 1:
        raise PlanError(f"plan for mesh {'x'.join(map(str, schedule['mesh']))}: a tp_plan is for a 1-D mesh")
    specs = spec_table(schedule, 1)
    kinds = {f"{n['name']}.{p['name']}": n["kind"] for n in graph["nodes"] for p in n.get("params", [])}
    styles = {}
    for name, spec in specs.items():
        base, _, role = name.partition(":")
        if base not in kinds:
            continue  # an activation
        if role:
            raise PlanError(f"tensor '{name}': the {role} copy kept apart from its use, which a tp_plan cannot say")
        if not _sharded(spec):
            continue
        node, _, param = base.rpartition(".")
        style = _STYLES.get(spec.dims) if set(spec.blocks) == {1} and not spec.partial else None
        if kinds[base] != "linear" or param != "weight" or style is None:
            raise PlanError(f"tensor '{name}' ({kinds[base]}, spec {_text(spec)}) has no tp_plan style")
        styles[node] = style
    return styles


def _sharded(spec: Spec) -> bool:
    return any(spec.dims) or bool(spec.partial)


def _text(spec: Spec) -> str:
    return "".join("S" if axes else "R" for axes in spec.dims) + ("+P" if spec.partial else "")


def collapse_layers(styles: dict) -> dict:
    """'model.layers.0.mlp.up_proj' ... -> 'model.layers.*.mlp.up_proj' when every layer agrees."""
    patterns: dict = {}
    for path, style in styles.items():
        pattern = re.sub(r"\.(\d+)\.", ".*.", path, count=1)
        patterns.setdefault(pattern, {})[path] = style
    out = {}
    for pattern, members in patterns.items():
        layers = {re.search(r"\.(\d+)\.", p).group(1) for p in members} if pattern != next(iter(members)) else set()
        if len(set(members.values())) == 1 and len(layers) > 1:
            out[pattern] = next(iter(members.values()))
        else:
            out.update(members)
    return dict(sorted(out.items()))


def to_tp_plan(plan: Union[dict, str], graph: dict) -> dict:
    """The plan as a Hugging Face style tp_plan (see above); PlanError naming the first tensor that cannot be said."""
    return collapse_layers(linear_styles(load_schedule(plan), graph))
