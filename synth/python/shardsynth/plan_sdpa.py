"""aten.scaled_dot_product_attention under a plan: the traced graph holds its
decomposition (trace_sdpa.py: KV heads repeated, key transposed, scores,
scale, causal mask, softmax, context), each a node with its own spec, so the
run executes that decomposition node by node on DTensors, every value
crossing between them through the plan's edges (PlanRun.operand), as for
eager attention. The fx node stands for the last node (the context)."""
from __future__ import annotations

from typing import Any

import torch


def _arg(node: torch.fx.Node, index: int, name: str, default: Any = None) -> Any:
    if len(node.args) > index:
        return node.args[index]
    return node.kwargs.get(name, default)


def run_sdpa(run: Any, node: torch.fx.Node, context: str, env: dict) -> Any:
    """The attention's context, computed by its decomposition's nodes under the plan of `run` (a PlanRun)."""
    from .local_ops import repeat_kv_local

    outside = {}
    for i, name in enumerate(("query", "key", "value")):
        fx = _arg(node, i, name)
        outside[run.names[fx.name]] = env[fx]
    mask = _arg(node, 3, "attn_mask")
    mask = env[mask] if isinstance(mask, torch.fx.Node) else mask
    causal = bool(_arg(node, 5, "is_causal", False))
    done: dict = {}

    def value(name: str) -> Any:
        if name in outside:
            return outside[name]
        if name not in done:
            graph_node = run.nodes[name]
            args = [run.operand(i, name, value(i)) for i in graph_node["inputs"]]
            done[name] = _op(run, graph_node, args, mask, causal, repeat_kv_local)
        return done[name]

    return value(context)


def _op(run: Any, node: dict, args: list, mask: Any, causal: bool, repeat_kv_local: Any) -> Any:
    kind = node["kind"]
    if kind == "repeat_kv":
        local = repeat_kv_local(args[0], run.result_spec(node["name"]), node["shape"], run.mesh)
        return local if local is not None else args[0].repeat_interleave(node["shape"][-3] // args[0].shape[-3], dim=-3)
    if kind == "transpose":
        return args[0].transpose(*node["attrs"]["dims"])
    if kind == "matmul":
        return torch.matmul(args[0], args[1])
    if kind == "scale":
        return args[0] / node["real_attrs"]["divisor"]
    if kind == "softmax":
        return torch.softmax(args[0], dim=-1)
    if kind == "causal_mask":
        return _masked(args[0], mask, causal)
    raise ValueError(f"attention node '{node['name']}' of kind {kind}: not part of an SDPA decomposition")


def _masked(scores: Any, mask: Any, causal: bool) -> Any:
    """SDPA's masking: a boolean mask keeps its True entries, a float mask is added; is_causal keeps j <= i."""
    t, s = scores.shape[-2], scores.shape[-1]
    if mask is not None and mask.dtype != torch.bool:
        scores = scores + mask
    elif mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    if causal:
        keep = torch.ones(t, s, dtype=torch.bool).tril(diagonal=s - t)
        scores = scores.masked_fill(~keep, float("-inf"))
    return scores
