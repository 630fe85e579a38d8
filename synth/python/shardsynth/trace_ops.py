"""One ATen op -> graph JSON node(s): the handlers of tracing.py's walk, chosen
by the tables of aten_table.py. Each returns None when it wrote the op, or
the reason the op has no kind."""
from __future__ import annotations

import math
from typing import Any, Optional

import torch
import torch.fx

from . import aten_table as table


def _arg(node: torch.fx.Node, index: int, name: str, default: Any = None) -> Any:
    if len(node.args) > index:
        return node.args[index]
    return node.kwargs.get(name, default)


def _shape(node: Any) -> list:
    val = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
    return [int(d) for d in val.shape] if isinstance(val, torch.Tensor) else []


def _number(tracer: Any, value: Any) -> Optional[float]:
    """A Python number, or a folded 0-dim tensor's value when export kept it (else None)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


def _alias(tracer: Any, node: torch.fx.Node, source: torch.fx.Node) -> None:
    tracer.name[node] = tracer.name[source]


def _single(tracer: Any, node: torch.fx.Node, kind: str, inputs: list, params: Optional[list] = None,
            attrs: Optional[dict] = None, real_attrs: Optional[dict] = None, name: Optional[str] = None) -> None:
    entry = tracer.emit(name or tracer.local_name(node), kind, inputs, node, params, attrs, real_attrs)
    tracer.name[node] = entry["name"]


def _with_params(tracer: Any, node: torch.fx.Node, op: str) -> Optional[str]:
    kind, slots = table.WITH_PARAMS[op]
    from .tracing import module_path

    owner, _ = module_path(node)
    params = []
    for index, pname in slots:
        value = _arg(node, index, pname)
        if value is None:
            continue
        if not tracer.is_param(value):
            return f"its {pname} is not a parameter"
        params.append(tracer.param(value, owner))
    acts = tracer.acts(node)
    if len(acts) != 1:
        return f"{len(acts)} activation inputs"
    if op == "embedding":
        params = [dict(p, name="weight") if p["name"] != "weight" and "tied_to" not in p else p for p in params]
    _single(tracer, node, kind, acts, params, name=owner or None)
    return None


def _binary(tracer: Any, node: torch.fx.Node, op: str) -> Optional[str]:
    """add / mul / div / sub of activations, numbers and folded constants."""
    acts = tracer.acts(node)
    a, b = _arg(node, 0, "self"), _arg(node, 1, "other")
    if len(acts) == 2 and op == "add" and list(torch.broadcast_shapes(_shape(a), _shape(b))) == _shape(node):
        _single(tracer, node, op, acts)  # GPT-2's tokens [b, t, e] + positions [1, t, e] broadcast
        return None
    if len(acts) == 2 and op == "mul" and _shape(a) == _shape(b) == _shape(node):
        _single(tracer, node, op, acts)
        return None
    if len(acts) != 1:
        return f"{len(acts)} activation inputs"
    x = acts[0]
    other = b if a is x else a
    number = _number(tracer, other)
    if op in ("mul", "div") and number is not None and number != 0:
        divisor = number if op == "div" else 1.0 / number
        if op == "div" and a is not x:
            return "a number divided by an activation"
        _single(tracer, node, "scale", acts, real_attrs={"divisor": divisor})
        return None
    if op in ("div", "mul") and isinstance(other, torch.fx.Node) and _shape(other) == []:
        value = _folded_scalar(tracer, other)
        if value is not None and value != 0 and (op == "mul" or a is x):
            _single(tracer, node, "scale", acts, real_attrs={"divisor": value if op == "div" else 1.0 / value})
            return None
    if op == "add" and isinstance(other, torch.fx.Node) and _is_mask(_shape(other), _shape(x)):
        _single(tracer, node, "causal_mask", acts)  # an additive attention mask
        return None
    return "an activation with a value that is neither a number nor a mask"


def _folded_scalar(tracer: Any, node: torch.fx.Node) -> Optional[float]:
    """The value of a 0-dim constant such as torch.full([], sqrt(d)), when the graph makes it from a number."""
    if node.op == "call_function" and node.target in (torch.ops.aten.full.default, torch.ops.aten.scalar_tensor.default):
        value = node.args[1] if node.target == torch.ops.aten.full.default else node.args[0]
        return _number(tracer, value)
    if node.op == "call_function" and node.target == torch.ops.aten._to_copy.default:
        return _folded_scalar(tracer, node.args[0])
    return None


def _is_mask(mask: list, scores: list) -> bool:
    """A [.., t, t] tensor broadcast onto attention scores."""
    return len(mask) >= 2 and len(scores) >= 2 and mask[-2:] == scores[-2:] and mask[-1] == scores[-1]


def _softmax(tracer: Any, node: torch.fx.Node) -> Optional[str]:
    dim = _arg(node, 1, "dim")
    x = tracer.acts(node)
    if len(x) != 1 or dim not in (-1, len(_shape(node)) - 1):
        return "softmax over a dim other than the last"
    _single(tracer, node, "softmax", x)
    return None


def _dims(tracer: Any, node: torch.fx.Node, op: str) -> Optional[str]:
    x = tracer.acts(node)
    rank = len(_shape(node))
    if op == "permute":
        dims = [int(d) % rank for d in _arg(node, 1, "dims")]
        if dims == list(range(rank)):
            _alias(tracer, node, x[0])
            return None
        _single(tracer, node, "permute", x, attrs={"dims": dims})
        return None
    pair = sorted([int(_arg(node, 1, "dim0")) % rank, int(_arg(node, 2, "dim1")) % rank]) if op == "transpose" else [0, 1]
    if pair[0] == pair[1]:
        _alias(tracer, node, x[0])
        return None
    _single(tracer, node, "transpose", x, attrs={"dims": pair})
    return None


def _split(tracer: Any, node: torch.fx.Node, op: str) -> Optional[str]:
    """Equal parts of the last dim, read through getitem: `split` nodes at each getitem."""
    x = tracer.acts(node)[0]
    shape = _shape(x)
    dim = _arg(node, 2, "dim", 0)
    size = _arg(node, 1, "split_size" if op == "split" else "split_sizes")
    if not isinstance(dim, int) or dim % len(shape) != len(shape) - 1:
        return "a split of a dim other than the last"
    sizes = [size] * (shape[-1] // size) if isinstance(size, int) else list(size)
    if len(set(sizes)) != 1 or sizes[0] * len(sizes) != shape[-1]:
        return "a split into unequal parts"
    tracer.splits[node] = (x, len(sizes))
    return None


def _getitem(tracer: Any, node: torch.fx.Node) -> Optional[str]:
    source, index = node.args
    if source not in tracer.splits:
        return "an item of a value that is not an equal split"
    x, sections = tracer.splits[source]
    _single(tracer, node, "split", [x], attrs={"dim": [-1], "sections": [sections], "index": [int(index) % sections]})
    return None


def _view(tracer: Any, node: torch.fx.Node) -> Optional[str]:
    x = tracer.acts(node)[0]
    if _shape(x) == _shape(node):
        _alias(tracer, node, x)
    else:
        _single(tracer, node, "view", [x])
    return None


def _slice(tracer: Any, node: torch.fx.Node) -> Optional[str]:
    x = tracer.acts(node)[0]
    if _shape(x) == _shape(node):
        _alias(tracer, node, x)  # a full slice (logits_to_keep = 0)
        return None
    return "a slice that drops elements"


def _feeds_only_the_loss(node: torch.fx.Node) -> bool:
    """Every use of `node` is a cross-entropy loss, directly or through views and aliases."""
    from .tracing import op_name

    def reaches(n: torch.fx.Node) -> bool:
        name = op_name(n)
        if name == "cross_entropy_loss":
            return True
        return (name in table.VIEWS or name in table.ALIASES) and bool(n.users) and all(reaches(u) for u in n.users)

    return bool(node.users) and all(reaches(u) for u in node.users)


def _cast(tracer: Any, node: torch.fx.Node) -> Optional[str]:
    x = tracer.acts(node)[0]
    if x.meta["val"].dtype == node.meta["val"].dtype:
        _alias(tracer, node, x)
        return None
    if node.meta["val"].dtype == torch.float32 and _feeds_only_the_loss(node):
        _alias(tracer, node, x)  # the loss's upcast of 16-bit logits: cross_entropy computes in fp32 itself
        return None
    return f"a cast from {x.meta['val'].dtype} to {node.meta['val'].dtype}"


def _dropout(tracer: Any, node: torch.fx.Node) -> Optional[str]:
    """A dropout of probability 0 (Hugging Face's attention_dropout outside training) is its input."""
    if _number(tracer, _arg(node, 1, "p", 0.0)) == 0.0:
        _alias(tracer, node, tracer.acts(node)[0])
        return None
    _single(tracer, node, "dropout", tracer.acts(node)[:1])
    return None


def _gelu(tracer: Any, node: torch.fx.Node) -> Optional[str]:
    tanh = node.kwargs.get("approximate", _arg(node, 1, "approximate", "none")) == "tanh"
    _single(tracer, node, "gelu_tanh" if tanh else "gelu", tracer.acts(node))
    return None


def _where(tracer: Any, node: torch.fx.Node) -> Optional[str]:
    """where(mask, x, fill) / masked_fill(x, mask, fill) against a constant mask: causal_mask."""
    acts = tracer.acts(node)
    condition = _arg(node, 0, "condition") if node.target.__name__.startswith("where") else _arg(node, 1, "mask")
    if len(acts) == 1 and condition not in tracer.active:
        _single(tracer, node, "causal_mask", acts)
        return None
    return "a select whose condition depends on the input"


def _matmul(tracer: Any, node: torch.fx.Node) -> Optional[str]:
    acts = tracer.acts(node)
    if len(acts) != 2:
        return "a matmul with a constant"
    _single(tracer, node, "matmul", acts)
    return None


def _flattened_from(tracer: Any, name: str, keep: int) -> str:
    """The graph node `name` read through a `view` that only merged leading
    dims, keeping the last `keep` (logits [b, t, v] -> [b*t, v]: keep 1;
    labels [b, t] -> [b*t]: keep 0), when nothing else reads that view: the
    view is dropped and its input's name returned. Else `name`."""
    entry = next((e for e in tracer.nodes if e["name"] == name), None)
    if entry is None or entry["kind"] != "view" or len(entry["inputs"]) != 1:
        return name
    source = next(e for e in tracer.nodes if e["name"] == entry["inputs"][0])
    shape, whole = entry["shape"], source["shape"]
    lead = whole[:len(whole) - keep]
    if len(shape) != keep + 1 or shape[1:] != whole[len(whole) - keep:] or not lead or math.prod(lead) != shape[0]:
        return name
    if any(name in e.get("inputs", []) for e in tracer.nodes if e is not entry):
        return name
    tracer.nodes.remove(entry)
    return source["name"]


def _cross_entropy(tracer: Any, node: torch.fx.Node) -> Optional[str]:
    """aten.cross_entropy_loss(logits [N, V], labels [N]), the mean without class
    weights or label smoothing (Hugging Face's causal LM loss given
    `shift_labels`): the op table's cross_entropy, the loss head of synth's
    training graphs, with divisor N. Views that flattened [b, t, v] and
    [b, t] are read through, so the head reads the logits as the builders'
    does. Labels equal to ignore_index are not told apart in a graph."""
    logits, labels = _arg(node, 0, "self"), _arg(node, 1, "target")
    acts = tracer.acts(node)
    if not isinstance(labels, torch.fx.Node) or acts != [logits, labels]:
        return "a cross-entropy whose logits or labels are not inputs of the model"
    if _arg(node, 2, "weight") is not None or _arg(node, 3, "reduction", 1) != 1 or _arg(node, 5, "label_smoothing", 0.0):
        return "a cross-entropy with class weights, label smoothing or a reduction other than the mean"
    names = [_flattened_from(tracer, tracer.name[logits], 1), _flattened_from(tracer, tracer.name[labels], 0)]
    by_name = {e["name"]: e for e in tracer.nodes}
    if by_name[names[0]]["shape"][:-1] != by_name[names[1]]["shape"]:
        names = [tracer.name[logits], tracer.name[labels]]  # one was flattened, the other not: both as traced
    divisor = float(math.prod(_shape(labels)))
    entry = {"name": tracer.unique("loss"), "kind": "cross_entropy", "inputs": names,
             "real_attrs": {"divisor": divisor}}
    entry.update(tracer.type_fields(node))
    tracer.nodes.append(entry)
    tracer.name[node] = entry["name"]
    return None


def map_op(tracer: Any, node: torch.fx.Node) -> Optional[str]:
    """Writes the node(s) for one active fx node; None, or why it has no kind."""
    import operator

    from .tracing import op_name

    if node.target is operator.getitem:
        return _getitem(tracer, node)
    op = op_name(node)
    handlers = {
        "add": lambda: _binary(tracer, node, "add"), "mul": lambda: _binary(tracer, node, "mul"),
        "div": lambda: _binary(tracer, node, "div"), "matmul": lambda: _matmul(tracer, node),
        "bmm": lambda: _matmul(tracer, node), "softmax": lambda: _softmax(tracer, node),
        "_softmax": lambda: _softmax(tracer, node), "permute": lambda: _dims(tracer, node, "permute"),
        "transpose": lambda: _dims(tracer, node, "transpose"), "t": lambda: _dims(tracer, node, "t"),
        "split": lambda: _split(tracer, node, "split"), "split_with_sizes": lambda: _split(tracer, node, "split_with_sizes"),
        "slice": lambda: _slice(tracer, node), "dropout": lambda: _dropout(tracer, node),
        "gelu": lambda: _gelu(tracer, node), "where": lambda: _where(tracer, node),
        "masked_fill": lambda: _where(tracer, node),
        "scaled_dot_product_attention": lambda: tracer.sdpa(node),
        "cross_entropy_loss": lambda: _cross_entropy(tracer, node),
    }
    if op in handlers:
        return handlers[op]()
    if op in table.WITH_PARAMS:
        return _with_params(tracer, node, op)
    if op in table.ALIASES:
        _alias(tracer, node, tracer.acts(node)[0])
        return None
    if op in table.DTYPE_CASTS:
        return _cast(tracer, node)
    if op in table.VIEWS:
        return _view(tracer, node)
    if op in table.ELEMENTWISE and len(tracer.acts(node)) == 1:
        _single(tracer, node, table.ELEMENTWISE[op], tracer.acts(node))
        return None
    return "no kind for it"
