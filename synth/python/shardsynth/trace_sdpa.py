"""aten.scaled_dot_product_attention -> the op table's attention, as Hugging
Face's eager path computes it: KV heads repeated to the query heads (when
enable_gqa), key transposed, scores matmul, scale, causal mask, softmax,
context matmul. Same kinds and shapes as `synth llama`'s attention, so a
model traced with attn_implementation="sdpa" plans as the eager one."""
from __future__ import annotations

import math
from typing import Any, Optional

import torch
import torch.fx


def _arg(node: torch.fx.Node, index: int, name: str, default: Any = None) -> Any:
    if len(node.args) > index:
        return node.args[index]
    return node.kwargs.get(name, default)


def _shape(node: torch.fx.Node) -> list:
    return [int(d) for d in node.meta["val"].shape]


def sdpa_nodes(tracer: Any, node: torch.fx.Node) -> Optional[str]:
    """Writes the decomposition of one SDPA call; None, or why it cannot."""
    from .tracing import DTYPES

    query, key, value = (_arg(node, i, n) for i, n in enumerate(("query", "key", "value")))
    mask = _arg(node, 3, "attn_mask")
    if any(x not in tracer.active for x in (query, key, value)) or (mask is not None and mask in tracer.active):
        return "attention whose query, key or value is constant, or whose mask depends on the input"
    if float(_arg(node, 4, "dropout_p", 0.0) or 0.0) != 0.0:
        return "attention with dropout"
    q_shape, k_shape = _shape(query), _shape(key)
    b, h, t, d = q_shape
    s = k_shape[-2]
    scale = _arg(node, 6, "scale")
    divisor = 1.0 / float(scale) if scale else math.sqrt(d)
    dtype = DTYPES[node.meta["val"].dtype]
    base = tracer.local_name(node)

    def add(suffix: str, kind: str, inputs: list, shape: list, attrs: Optional[dict] = None,
            real_attrs: Optional[dict] = None) -> str:
        entry = {"name": tracer.unique(f"{base}.{suffix}"), "kind": kind, "inputs": inputs, "shape": shape,
                 "dtype": dtype}
        if attrs:
            entry["attrs"] = attrs
        if real_attrs:
            entry["real_attrs"] = real_attrs
        tracer.nodes.append(entry)
        return entry["name"]

    k_name, v_name = tracer.name[key], tracer.name[value]
    if k_shape[1] != h:
        k_name = add("k_repeat", "repeat_kv", [k_name], [b, h, s, d])
        v_name = add("v_repeat", "repeat_kv", [v_name], [b, h, s, _shape(value)[-1]])
    key_t = add("key_t", "transpose", [k_name], [b, h, d, s], attrs={"dims": [2, 3]})
    scores = add("scores", "matmul", [tracer.name[query], key_t], [b, h, t, s])
    scaled = add("scale", "scale", [scores], [b, h, t, s], real_attrs={"divisor": divisor})
    masked = add("mask", "causal_mask", [scaled], [b, h, t, s]) if (_arg(node, 5, "is_causal", False) or
                                                                   mask is not None) else scaled
    probs = add("softmax", "softmax", [masked], [b, h, t, s])
    context = add("context", "matmul", [probs, v_name], _shape(node))
    tracer.name[node] = context
    return None
