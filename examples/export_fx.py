#!/usr/bin/env python3
"""Exports a torch.nn.Module as a shardsynth graph JSON file (docs/graph_json.md).

The module is traced with torch.fx (symbolic_trace, with Hugging Face's Conv1D
and GELU modules kept whole), shapes come from
torch.fx.passes.shape_prop.ShapeProp on example inputs, and every fx node that
computes an activation becomes one node of a kind from shardsynth's op table.
Values that do not depend on an input (buffers such as a causal mask, sizes,
constants) are folded into the node that reads them. An fx node with no
matching kind is written with its own name as kind (`sin`, `Conv2d`), which
`synth` rejects unless run with --unknown-ops=replicate.

    .venv/bin/python examples/export_fx.py mlp --out mlp.json [--batch 8 --seq 1024 --hidden 1024 --ffn 4096]
    .venv/bin/python examples/export_fx.py gpt2 --layers 2 --heads 4 --embd 64 --seq 32 --vocab 256 --out g.json
    .venv/bin/python examples/export_fx.py llama --layers 2 --hidden 64 --heads 4 --kv-heads 2 --ffn 96 --vocab 256 \
        --seq 16 --out l.json [--tied]

gpt2 and llama take --loss: the graph ends in the cross-entropy loss of the
logits against a `labels` input, as `synth`'s training graphs do.

As a library: export_graph(module, example_inputs) returns the JSON value and
write_graph(graph, path) writes it atomically.
"""
import argparse
import json
import math
import operator
import os
import sys
import tempfile

import torch
import torch.fx
import torch.nn.functional as F
from torch import nn
from torch.fx.passes.shape_prop import ShapeProp

FORMAT = "shardsynth-graph"
VERSION = 1
# Kinds of shardsynth's op table that this exporter writes; an unmatched op
# whose name collides with one of them gets a suffix so it stays unknown.
TABLE_KINDS = {"add", "causal_mask", "conv1d", "cross_entropy", "dropout", "embedding", "gelu", "gelu_tanh", "layernorm", "linear",
               "matmul", "mul", "opaque", "permute", "relu", "repeat_kv", "rms_norm", "rotary", "scale", "silu",
               "softmax", "split", "transpose", "view"}
DTYPES = {torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16", torch.int64: "int64"}
# Leaf modules outside torch.nn, by class name (Hugging Face's).
LEAF_CLASSES = {"Conv1D": "conv1d", "NewGELUActivation": "gelu_tanh", "GELUActivation": "gelu", "LlamaRMSNorm": "rms_norm"}
# Functions and methods by canonical op name.
FUNCTIONS = {
    operator.add: "add", torch.add: "add", operator.truediv: "truediv", torch.div: "truediv", operator.mul: "mul",
    torch.mul: "mul", operator.matmul: "matmul", torch.matmul: "matmul", torch.bmm: "matmul", F.gelu: "gelu",
    F.relu: "relu", torch.relu: "relu", F.silu: "silu", F.softmax: "softmax", torch.softmax: "softmax", F.dropout: "dropout",
    torch.where: "where", operator.getitem: "getitem", torch.split: "split", torch.chunk: "chunk",
    torch.permute: "permute", torch.transpose: "transpose", torch.reshape: "view", torch.flatten: "view",
    torch.unsqueeze: "view", torch.squeeze: "view", F.cross_entropy: "cross_entropy",
}
METHODS = {"add": "add", "div": "truediv", "mul": "mul", "matmul": "matmul", "softmax": "softmax", "view": "view",
           "reshape": "view", "flatten": "view", "unsqueeze": "view", "squeeze": "view", "permute": "permute",
           "transpose": "transpose", "split": "split", "chunk": "chunk", "masked_fill": "where",
           "contiguous": "alias", "clone": "alias", "detach": "alias", "relu": "relu", "mul_": "mul"}


class ExportError(Exception):
    """A module this exporter cannot describe; the message names the fx node."""


class ScopeTracer(torch.fx.Tracer):
    """symbolic_trace's tracer that keeps Hugging Face leaf modules whole and
    records in node.meta["scope"] the path of the module whose forward made each node."""

    def __init__(self):
        super().__init__()
        self.module_paths = []

    def is_leaf_module(self, m, qualname):
        return type(m).__name__ in LEAF_CLASSES or super().is_leaf_module(m, qualname)

    def call_module(self, m, forward, args, kwargs):
        self.module_paths.append(self.path_of_module(m))
        try:
            return super().call_module(m, forward, args, kwargs)
        finally:
            self.module_paths.pop()

    def create_node(self, *args, **kwargs):
        node = super().create_node(*args, **kwargs)
        node.meta["scope"] = self.module_paths[-1] if self.module_paths else ""
        return node


def _flatten(value):
    """fx.Node leaves of nested args (lists, tuples, dicts, slices)."""
    if isinstance(value, torch.fx.Node):
        return [value]
    if isinstance(value, (list, tuple)):
        return [n for v in value for n in _flatten(v)]
    if isinstance(value, dict):
        return [n for v in value.values() for n in _flatten(v)]
    if isinstance(value, slice):
        return _flatten([value.start, value.stop, value.step])
    return []


def _qualified_name(function):
    """"torch._C._nn.gelu", "_operator.add": deterministic, unlike repr()."""
    try:
        return torch.fx.node._get_qualified_name(function)
    except Exception:  # a callable fx cannot name
        return getattr(function, "__name__", "function")


def _arg(node, index, name, default=None):
    if len(node.args) > index:
        return node.args[index]
    return node.kwargs.get(name, default)


class _Exporter:
    def __init__(self, root, gm, ties):
        self.root = root
        self.gm = gm
        self.ties = ties       # full parameter name -> the first name of the same tensor
        self.nodes = []        # the JSON nodes, in fx order
        self.name = {}         # fx node -> JSON name of the value it stands for
        self.active = set()    # fx nodes whose value is an activation (depends on an input tensor)
        self.splits = {}       # fx split node -> (input name, dim, sections)
        self.used = set()      # JSON names taken

    # --- helpers ---------------------------------------------------------------
    def fail(self, node, what):
        return ExportError(f"fx node '{node.name}': {what}")

    def meta(self, node):
        meta = node.meta.get("tensor_meta")
        if meta is None or not hasattr(meta, "shape"):
            raise self.fail(node, "has no single tensor result")
        return meta

    def type_fields(self, node, meta=None):
        meta = meta or self.meta(node)
        if meta.dtype not in DTYPES:
            raise self.fail(node, f"dtype {meta.dtype} is not supported (known: {', '.join(DTYPES.values())})")
        return {"shape": list(meta.shape), "dtype": DTYPES[meta.dtype]}

    def unique(self, text):
        name, n = text, 1
        while name in self.used:
            name, n = f"{text}_{n}", n + 1
        self.used.add(name)
        return name

    def json_name(self, node):
        if node.op == "call_module":
            return self.unique(node.target)
        scope = node.meta.get("scope", "")
        return self.unique(f"{scope}.{node.name}" if scope else node.name)

    def acts(self, node):
        return [n for n in _flatten((node.args, node.kwargs)) if n in self.active]

    def emit(self, node, kind, inputs, target="", params=None, attrs=None, real_attrs=None, type_node=None):
        entry = {"name": self.json_name(node), "kind": kind, "inputs": [self.name[i] for i in inputs]}
        entry.update(self.type_fields(type_node or node))
        if target:
            entry["target"] = target
        if params:
            entry["params"] = params
        if attrs:
            entry["attrs"] = attrs
        if real_attrs:
            entry["real_attrs"] = real_attrs
        self.nodes.append(entry)
        self.name[node] = entry["name"]
        return entry

    def params_of(self, node, module, names=None):
        params = []
        for pname, p in module.named_parameters(recurse=True):
            if names is not None and pname not in names:
                continue
            if p.dtype not in DTYPES:
                raise self.fail(node, f"param '{pname}' has dtype {p.dtype}, which is not supported")
            entry = {"name": pname, "shape": list(p.shape), "dtype": DTYPES[p.dtype]}
            own = f"{node.target}.{pname}"
            first = self.ties.get(own, own)
            if first != own:
                entry["tied_to"] = first
            params.append(entry)
        return params

    # --- per opcode ------------------------------------------------------------
    def module_node(self, node, inputs):
        module = self.root.get_submodule(node.target)
        target = str(type(module))
        leaf = LEAF_CLASSES.get(type(module).__name__)
        if leaf in ("conv1d",):
            return self.emit(node, leaf, inputs[:1], target, self.params_of(node, module, ["weight", "bias"]))
        if leaf == "rms_norm":
            return self.emit(node, leaf, inputs[:1], target, self.params_of(node, module, ["weight"]),
                             real_attrs={"eps": float(module.variance_epsilon)})
        if leaf:
            return self.emit(node, leaf, inputs[:1], target)
        if isinstance(module, nn.Linear):
            return self.emit(node, "linear", inputs[:1], target, self.params_of(node, module, ["weight", "bias"]))
        if isinstance(module, nn.Embedding):
            return self.emit(node, "embedding", inputs[:1], target, self.params_of(node, module, ["weight"]))
        if isinstance(module, nn.LayerNorm) and len(module.normalized_shape) == 1 and module.elementwise_affine:
            return self.emit(node, "layernorm", inputs[:1], target, self.params_of(node, module, ["weight", "bias"]))
        if isinstance(module, nn.Dropout):
            return self.emit(node, "dropout", inputs[:1], target)
        if isinstance(module, nn.GELU):
            return self.emit(node, "gelu_tanh" if module.approximate == "tanh" else "gelu", inputs[:1], target)
        if isinstance(module, nn.ReLU):
            return self.emit(node, "relu", inputs[:1], target)
        if isinstance(module, nn.SiLU):
            return self.emit(node, "silu", inputs[:1], target)
        if isinstance(module, nn.Softmax) and self.is_last_dim(node, inputs[0], module.dim):
            return self.emit(node, "softmax", inputs[:1], target)
        if isinstance(module, nn.Identity):
            self.name[node] = self.name[inputs[0]]
            return None
        return self.unknown(node, type(module).__name__, inputs, target, self.params_of(node, module))

    def cross_entropy_divisor(self, node: torch.fx.Node, inputs: list[torch.fx.Node]) -> float | None:
        """F.cross_entropy(logits [N, C], labels [N]) without class weights or label smoothing: the table's
        cross_entropy, whose "divisor" is N for reduction="mean" (every label counted: labels equal to
        ignore_index are not told apart in a graph) and 1 for "sum"; None for anything else."""
        logits, labels = (list(self.meta(n).shape) for n in inputs)
        reduction = _arg(node, 5, "reduction", "mean")
        plain = _arg(node, 2, "weight") is None and not _arg(node, 6, "label_smoothing", 0.0)
        if len(logits) != 2 or labels != logits[:1] or not plain or reduction not in ("mean", "sum"):
            return None
        return float(labels[0]) if reduction == "mean" else 1.0

    def unflatten_loss_inputs(self, entry):
        """The loss head as synth's builders write it: where the cross-entropy reads
        logits [b, t, v] flattened to [b*t, v] and labels [b, t] flattened to
        [b*t] by views nothing else reads, the views are dropped and the loss
        reads the unflattened tensors."""
        by_name = {n["name"]: n for n in self.nodes}
        views = [by_name[i] for i in entry["inputs"]]
        if any(v["kind"] != "view" or len(v["inputs"]) != 1 for v in views):
            return
        sources = [by_name[v["inputs"][0]] for v in views]
        logits, labels = (s["shape"] for s in sources)
        if logits[:-1] != labels or views[0]["shape"] != [math.prod(labels), logits[-1]]:
            return
        if any(v["name"] in n["inputs"] for v in views for n in self.nodes if n is not entry):
            return
        for v in views:
            self.nodes.remove(v)
        entry["inputs"] = [s["name"] for s in sources]

    def is_last_dim(self, node, input_node, dim):
        rank = len(self.meta(input_node).shape)
        return isinstance(dim, int) and dim in (-1, rank - 1)

    def unknown(self, node, op_name, inputs, target, params=None):
        kind = op_name if op_name not in TABLE_KINDS else f"{op_name}/unsupported"
        return self.emit(node, kind, inputs, target, params)

    def function_node(self, node, op, inputs):
        target = node.target if isinstance(node.target, str) else _qualified_name(node.target)
        x = inputs[0]
        others = [a for a in node.args if not isinstance(a, torch.fx.Node)]
        if op == "alias" and len(inputs) == 1:
            self.name[node] = self.name[x]
            return None
        if op == "add" and len(inputs) == 2 and len(_flatten(node.args)) == 2:
            return self.emit(node, "add", inputs, target)
        if op == "matmul" and len(inputs) == 2:
            return self.emit(node, "matmul", inputs, target)
        if op == "mul" and len(inputs) == 2 and len(_flatten(node.args)) == 2 \
                and list(self.meta(inputs[0]).shape) == list(self.meta(inputs[1]).shape):
            return self.emit(node, "mul", inputs, target)
        if op == "apply_rotary" and len(inputs) == 1 and isinstance(_arg(node, 1, "theta"), (int, float)):
            return self.emit(node, "rotary", inputs, target, real_attrs={"theta": float(_arg(node, 1, "theta"))})
        if op == "repeat_kv" and len(inputs) == 1:
            return self.emit(node, "repeat_kv", inputs, target)
        if op in ("truediv", "mul") and len(inputs) == 1 and node.args[0] is x and len(node.args) == 2 \
                and isinstance(node.args[1], (int, float)) and node.args[1] != 0:
            divisor = float(node.args[1]) if op == "truediv" else 1.0 / float(node.args[1])
            return self.emit(node, "scale", inputs, target, real_attrs={"divisor": divisor})
        if op == "mul" and len(inputs) == 1 and len(node.args) == 2 and node.args[1] is x \
                and isinstance(node.args[0], (int, float)) and node.args[0] != 0:
            return self.emit(node, "scale", inputs, target, real_attrs={"divisor": 1.0 / float(node.args[0])})
        if op == "gelu" and len(inputs) == 1:
            tanh = node.kwargs.get("approximate", "none") == "tanh"
            return self.emit(node, "gelu_tanh" if tanh else "gelu", inputs, target)
        if op in ("relu", "dropout", "silu") and len(inputs) == 1:
            return self.emit(node, op, inputs, target)
        if op == "softmax" and len(inputs) == 1 and self.is_last_dim(node, x, _arg(node, 1, "dim")):
            return self.emit(node, "softmax", inputs, target)
        if op == "cross_entropy" and len(inputs) == 2:
            divisor = self.cross_entropy_divisor(node, inputs)
            if divisor is not None:
                entry = self.emit(node, "cross_entropy", inputs, target, real_attrs={"divisor": divisor})
                self.unflatten_loss_inputs(entry)
                return entry
        condition = _arg(node, 1, "mask") if node.target == "masked_fill" else _arg(node, 0, "condition")
        if op == "where" and len(inputs) == 1 and x is not condition:
            return self.emit(node, "causal_mask", inputs, target)  # a select against a constant mask
        if op == "view" and len(inputs) == 1:
            return self.emit(node, "view", inputs, target)
        if op == "permute" and len(inputs) == 1:
            dims = list(others[0]) if len(others) == 1 and isinstance(others[0], (list, tuple)) else others
            dims = dims or list(node.kwargs.get("dims", []))
            return self.emit(node, "permute", inputs, target, attrs={"dims": [int(d) for d in dims]})
        if op == "transpose" and len(inputs) == 1:
            dims = [_arg(node, 1, "dim0"), _arg(node, 2, "dim1")]
            return self.emit(node, "transpose", inputs, target, attrs={"dims": [int(d) for d in dims]})
        if op in ("split", "chunk") and len(inputs) == 1 and self.record_split(node, op, x):
            return None
        if op == "getitem" and x in self.splits and len(node.args) == 2 and isinstance(node.args[1], int):
            source, dim, sections = self.splits[x]
            node_entry = self.emit(node, "split", [], target, attrs={"dim": [dim], "sections": [sections],
                                                                     "index": [node.args[1] % sections]})
            node_entry["inputs"] = [source]
            return node_entry
        return self.unknown(node, op if op != "alias" else target, inputs, target)

    def record_split(self, node, op, x):
        """Equal parts of the last dim become `split` nodes at their getitem; anything else stays unknown."""
        shape = list(self.meta(x).shape)
        dim = _arg(node, 2 if op == "split" else 2, "dim", 0)
        size = _arg(node, 1, "split_size_or_sections" if op == "split" else "chunks",
                    node.kwargs.get("split_size", node.kwargs.get("sections")))
        if not isinstance(dim, int) or dim not in (-1, len(shape) - 1):
            return False
        extent = shape[-1]
        if op == "chunk":
            sections = size if isinstance(size, int) and size > 0 and extent % size == 0 else None
        elif isinstance(size, int) and size > 0 and extent % size == 0:
            sections = extent // size
        elif isinstance(size, (list, tuple)) and size and len(set(size)) == 1 and sum(size) == extent:
            sections = len(size)
        else:
            sections = None
        if sections is None:
            return False
        self.splits[node] = (self.name[x], -1, sections)
        return True

    # --- the whole graph -------------------------------------------------------
    def run(self):
        outputs = []
        for node in self.gm.graph.nodes:
            if node.op == "placeholder":
                if "tensor_meta" not in node.meta:
                    continue  # a non-tensor argument
                self.active.add(node)
                self.emit(node, "placeholder", [])
                continue
            if node.op == "output":
                outputs = [n for n in _flatten(node.args) if n in self.active]
                continue
            inputs = self.acts(node)
            if not inputs or "tensor_meta" not in node.meta:
                continue  # a constant, a size, a buffer: folded into its readers
            self.active.add(node)
            if node.op == "call_module":
                self.module_node(node, inputs)
            elif node.op == "call_function":
                self.function_node(node, FUNCTIONS.get(node.target, getattr(node.target, "__name__", "?")), inputs)
            elif node.op == "call_method":
                self.function_node(node, METHODS.get(node.target, node.target), inputs)
            else:
                raise self.fail(node, f"unexpected fx op '{node.op}'")
        if not outputs:
            raise ExportError("the module returns no tensor that depends on its inputs")
        for i, out in enumerate(outputs):
            if out not in self.name:
                raise self.fail(out, "a split's tuple is returned whole")
            entry = {"name": self.unique("output" if i == 0 else f"output_{i}"), "kind": "output",
                     "inputs": [self.name[out]]}
            source = next(n for n in self.nodes if n["name"] == self.name[out])
            entry.update({"shape": source["shape"], "dtype": source["dtype"]})
            self.nodes.append(entry)
        self.infer_groups()
        return {"format": FORMAT, "version": VERSION, "nodes": self.nodes}

    def infer_groups(self):
        """A conv1d read only by equal splits of its features is a fused projection
        (c_attn's q | k | v): it gets attribute groups = the number of parts."""
        readers = {}
        for n in self.nodes:
            for i in n["inputs"]:
                readers.setdefault(i, []).append(n)
        for n in self.nodes:
            if n["kind"] != "conv1d":
                continue
            parts = {tuple(r["attrs"]["sections"]) if r["kind"] == "split" else None for r in readers.get(n["name"], [])}
            if len(parts) == 1 and None not in parts and next(iter(parts))[0] > 1:
                n["attrs"] = {"groups": [next(iter(parts))[0]]}


def _tied_names(module):
    """Full name of every parameter -> the first full name of the same tensor
    (registration order: GPT-2's lm_head.weight -> wte.weight)."""
    first, ties = {}, {}
    for path, m in module.named_modules(remove_duplicate=False):
        for pname, p in m.named_parameters(recurse=False):
            name = f"{path}.{pname}" if path else pname
            ties[name] = first.setdefault(id(p), name)
    return ties


def export_graph(module, example_inputs, device=None):
    """Traces `module` (put in eval mode) with torch.fx, runs ShapeProp on
    `example_inputs` (a tuple of tensors, one per forward argument) and returns
    the graph JSON value. With device="meta" the module and inputs are first
    moved to the meta device (in place: shapes without memory or compute; tied
    parameters are recorded before the move unties them). Raises ExportError
    naming the fx node it cannot describe."""
    ties = _tied_names(module)
    module.eval()
    if device is not None:
        module.to(device)
        example_inputs = tuple(x.to(device) for x in example_inputs)
    tracer = ScopeTracer()
    graph = tracer.trace(module)
    gm = torch.fx.GraphModule(tracer.root, graph)
    with torch.no_grad():
        ShapeProp(gm).propagate(*example_inputs)
    return _Exporter(module, gm, ties).run()


def write_graph(graph, path):
    """Writes the JSON (sorted keys, one trailing newline) to a temporary file beside `path`, then renames it."""
    text = json.dumps(graph, indent=2, sort_keys=True) + "\n"
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".export_fx.", dir=folder)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


class WithLoss(nn.Module):
    """A language model's forward ending in its training loss: the mean
    cross-entropy of every position's logits against `labels` (the last
    input; the next token of each position, as a data loader hands them)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, labels):
        return F.cross_entropy(self.model(input_ids).flatten(0, 1), labels.flatten())


class WithLossAndPositions(WithLoss):
    """WithLoss for a model that also takes position ids (examples/torch_gpt2.py)."""

    def forward(self, input_ids, labels, position_ids):
        return F.cross_entropy(self.model(input_ids, position_ids).flatten(0, 1), labels.flatten())


def _positive(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got '{text}'")
    return value


def main(argv=None):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser(prog="export_fx.py", description="export a torch model as shardsynth graph JSON")
    sub = parser.add_subparsers(dest="model", required=True)
    mlp = sub.add_parser("mlp", help="examples/torch_mlp.py: x -> fc1 -> gelu -> fc2 (as `synth mlp`)")
    for flag, default in (("--batch", 8), ("--seq", 1024), ("--hidden", 1024), ("--ffn", 4096)):
        mlp.add_argument(flag, type=_positive, default=default)
    gpt2 = sub.add_parser("gpt2", help="examples/torch_gpt2.py: GPT-2 in plain torch (as `synth gpt2`)")
    for flag, default in (("--layers", 12), ("--heads", 12), ("--embd", 768), ("--seq", 1024), ("--batch", 8),
                          ("--vocab", 50257), ("--positions", 1024)):
        gpt2.add_argument(flag, type=_positive, default=default)
    llama = sub.add_parser("llama", help="examples/torch_llama.py: Llama in plain torch (as `synth llama`)")
    for flag, default in (("--layers", 32), ("--hidden", 4096), ("--heads", 32), ("--kv-heads", 8), ("--ffn", 14336),
                          ("--vocab", 128256), ("--seq", 1024), ("--batch", 8)):
        llama.add_argument(flag, type=_positive, default=default)
    llama.add_argument("--theta", type=float, default=500000.0, help="rotary base (rope_theta)")
    llama.add_argument("--tied", action="store_true", help="lm_head shares model.embed_tokens.weight")
    for p in (mlp, gpt2, llama):
        p.add_argument("--out", required=True, help="the graph JSON file to write")
    for p in (gpt2, llama):
        p.add_argument("--loss", action="store_true",
                       help="end in the cross-entropy loss against a labels input (as synth's training graphs)")
    args = parser.parse_args(argv)
    try:
        if args.model == "mlp":
            import torch_mlp
            module, inputs = torch_mlp.Mlp(args.hidden, args.ffn), torch_mlp.example_inputs(args.batch, args.seq, args.hidden)
        elif args.model == "llama":
            import torch_llama
            if args.hidden % args.heads or args.heads % args.kv_heads or (args.hidden // args.heads) % 2:
                raise ExportError(f"heads {args.heads} must divide hidden {args.hidden}, kv-heads {args.kv_heads} must "
                                  f"divide heads, and the head dim must be even")
            module = torch_llama.LlamaForCausalLM(args.layers, args.hidden, args.heads, args.kv_heads, args.ffn,
                                                  args.vocab, args.tied, args.theta)
            inputs = torch_llama.example_inputs(args.batch, args.seq)
        else:
            import torch_gpt2
            if args.embd % args.heads or args.seq > args.positions:
                raise ExportError(f"heads {args.heads} must divide embd {args.embd} and seq {args.seq} must not "
                                  f"exceed positions {args.positions}")
            module = torch_gpt2.Gpt2(args.layers, args.heads, args.embd, args.vocab, args.positions)
            inputs = torch_gpt2.example_inputs(args.batch, args.seq)
        if getattr(args, "loss", False):
            labels = torch.zeros(args.batch, args.seq, dtype=torch.int64)
            module = WithLoss(module) if len(inputs) == 1 else WithLossAndPositions(module)
            inputs = (inputs[0], labels, *inputs[1:])
        write_graph(export_graph(module, inputs, device="meta"), args.out)
    except (ExportError, OSError) as e:
        print(f"export_fx.py: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
