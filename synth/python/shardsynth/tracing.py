"""nn.Module -> shardsynth graph JSON (docs/graph_json.md), through torch.export.

torch.export (not torch.fx's symbolic_trace) because it takes Hugging Face
models as the library defines them: their forward has data-dependent Python
(masks, caches, attention dispatch) that symbolic tracing cannot follow, and
export runs it on fake tensors, so a llama-3-8b on the meta device traces
without allocating a weight. Its graph is ATen ops with each node's module
path (nn_module_stack) and source line (stack_trace), which name the nodes and
the errors here.

    graph = trace(model, (input_ids,))                 # a dict, graph JSON
    graph = trace(model, (input_ids,), {"position_ids": pos})
    graph = trace(model, (input_ids,), {"labels": labels, "shift_labels": labels})   # ends in the loss

A model that computes its cross-entropy loss (Hugging Face's causal LMs
given `shift_labels`, the next token of every position, as a data loader
hands them) ends in the op table's `cross_entropy`, the loss head of
`synth`'s training graphs, and the graph's one output is the loss.

Naming: a node made by a module is named by the module's path, and a graph
parameter `node.param` is then the module's own parameter name
(`model.layers.0.self_attn.q_proj.weight`), so a plan's tensors map back to
the module without another table. A parameter shared with an earlier module
(GPT-2's lm_head) is written with `tied_to` that module's name.
"""
from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import dataclass, field
from typing import Any, Optional

import torch
import torch.fx

from . import aten_table as table
from .trace_sdpa import sdpa_nodes

FORMAT = "shardsynth-graph"
VERSION = 1
DTYPES = {torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16", torch.int64: "int64"}


class TraceError(ValueError):
    """A model trace() cannot describe; one line naming the op and the model's source line."""


def source_line(node: torch.fx.Node) -> str:
    """`file.py:123` of the innermost frame of the node's stack trace, or its fx name."""
    frames = re.findall(r'File "([^"]+)", line (\d+)', node.meta.get("stack_trace") or "")
    if not frames:
        return f"fx node '{node.name}'"
    path, line = frames[-1]
    return f"{os.path.basename(path)}:{line}"


def op_name(node: torch.fx.Node) -> str:
    """'linear' for aten.linear.default; the callable's name otherwise."""
    target = node.target
    if isinstance(target, torch._ops.OpOverload):
        return target._schema.name.split("::")[-1]
    return getattr(target, "__name__", str(target))


def module_path(node: torch.fx.Node) -> tuple[str, str]:
    """(path, class name) of the innermost module whose forward made the node; ('', '') at the top."""
    stack = node.meta.get("nn_module_stack") or {}
    if not stack:
        return "", ""
    path, cls = list(stack.values())[-1]
    return _clean_path(path), _class_name(cls)


def _clean_path(path: str) -> str:
    """export writes L['self'].model.layers[0] style paths in some versions: back to dotted names."""
    path = re.sub(r"^L\['self'\]\.?", "", path)
    path = re.sub(r"\[(\d+)\]", r".\1", path)
    path = re.sub(r"\._modules\['([^']+)'\]", r".\1", path)
    return path.strip(".")


def _class_name(cls: Any) -> str:
    text = cls if isinstance(cls, str) else getattr(cls, "__qualname__", str(cls))
    return text.rsplit(".", 1)[-1].strip("'>")


def leaf_module(node: torch.fx.Node) -> Optional[tuple[str, str]]:
    """(path, kind) of the outermost module kept whole that made the node, if any."""
    for path, cls in (node.meta.get("nn_module_stack") or {}).values():
        name = _class_name(cls)
        kind = table.LEAF_MODULES.get(name) or ("rms_norm" if name.endswith(table.RMS_NORM_SUFFIX) else None)
        if kind:
            return _clean_path(path), kind
    return None


def leaf_call(node: torch.fx.Node) -> Optional[str]:
    """The kind of the function kept whole (rotary) that the node's source line calls, if any."""
    lines = [line.strip() for line in (node.meta.get("stack_trace") or "").splitlines() if line.strip()]
    code = lines[-1] if lines else ""
    return next((kind for call, kind in table.LEAF_CALLS.items() if call in code), None)


def is_identity(node: torch.fx.Node) -> bool:
    """An op whose result is its first input unchanged (alias, same-dtype cast, assert)."""
    name = op_name(node)
    if name == "_assert_tensor_metadata" or name in table.ALIASES:
        return True
    if name in table.DTYPE_CASTS and node.args and isinstance(node.args[0], torch.fx.Node):
        a, b = node.args[0].meta.get("val"), node.meta.get("val")
        return isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.dtype == b.dtype
    return False


@dataclass
class Group:
    """Active fx nodes that become one graph node (a module or function kept whole)."""

    kind: str                                              # op kind of the graph node
    path: str                                              # module path: the node's name (with a suffix for functions)
    members: list = field(default_factory=list)            # fx nodes, in graph order


def export_program(model: torch.nn.Module, args: tuple, kwargs: Optional[dict]) -> Any:
    """torch.export of the model in eval mode, with Hugging Face's cache off."""
    model.eval()
    kwargs = dict(kwargs or {})
    config = getattr(model, "config", None)
    if config is not None and hasattr(config, "use_cache"):
        kwargs.setdefault("use_cache", False)
    with torch.no_grad():
        return torch.export.export(model, tuple(args), kwargs, strict=False)


def trace(model: torch.nn.Module, args: tuple = (), kwargs: Optional[dict] = None, *, unknown_ops: str = "error") -> dict:
    """The graph JSON of `model` run on `args`/`kwargs` (tensors on any device,
    the meta device included). Every tensor input is a placeholder; values that
    depend on none (masks, rotary tables, sizes) are folded into their readers.
    unknown_ops="error" raises TraceError for an op with no kind; "keep" writes
    the op's name as kind (for `synth --unknown-ops=replicate`)."""
    if unknown_ops not in ("error", "keep"):
        raise TraceError(f"unknown_ops '{unknown_ops}' is not one of: error, keep")
    program = export_program(model, args, kwargs)
    tracer = _Tracer(model, program, unknown_ops)
    graph = tracer.run()
    model.shardsynth_graph = graph  # parallelize() reads the graph's edges from here
    # ... and runs the exported program op by op (plan_run.py): fx node name -> graph node name
    model.shardsynth_program = program
    model.shardsynth_fx_names = {n.name: name for n, name in tracer.name.items()}
    return graph


def write_graph(graph: dict, path: str) -> None:
    """Writes the JSON (sorted keys, one trailing newline) beside `path`, then renames it over it."""
    text = json.dumps(graph, indent=2, sort_keys=True) + "\n"
    fd, tmp = tempfile.mkstemp(prefix=".trace.", dir=os.path.dirname(os.path.abspath(path)))
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


class _Tracer:
    def __init__(self, model: torch.nn.Module, program: Any, unknown_ops: str):
        self.model = model
        self.program = program
        self.unknown_ops = unknown_ops
        self.graph = program.graph_module.graph
        signature = program.graph_signature
        self.param_of = dict(signature.inputs_to_parameters)   # placeholder name -> parameter FQN
        self.user_inputs = set(signature.user_inputs)          # placeholder names of the model's inputs
        self.aliases = _parameter_aliases(model)               # parameter FQN -> every FQN of that tensor
        self.nodes: list[dict] = []                            # the graph JSON nodes, in order
        self.name: dict = {}                                   # fx node -> graph node name of its value
        self.active: set = set()                               # fx nodes that depend on a model input
        self.splits: dict = {}                                 # fx split node -> (input name, sections, dim)
        self.used: set = set()                                 # graph node names taken
        self.promoted: set = set()                             # folded values read as placeholders (position ids)

    # --- helpers -------------------------------------------------------------
    def fail(self, node: torch.fx.Node, what: str) -> TraceError:
        return TraceError(f"{source_line(node)}: {what}")

    def value(self, node: torch.fx.Node) -> Any:
        return node.meta.get("val")

    def type_fields(self, node: torch.fx.Node) -> dict:
        val = self.value(node)
        if not isinstance(val, torch.Tensor):
            raise self.fail(node, f"op {op_name(node)} has no single tensor result")
        if val.dtype not in DTYPES:
            raise self.fail(node, f"dtype {val.dtype} of op {op_name(node)} is not supported "
                                  f"(known: {', '.join(DTYPES.values())})")
        return {"shape": [int(d) for d in val.shape], "dtype": DTYPES[val.dtype]}

    def unique(self, text: str) -> str:
        name, n = text, 1
        while name in self.used:
            name, n = f"{text}_{n}", n + 1
        self.used.add(name)
        return name

    def acts(self, node: torch.fx.Node) -> list:
        """Active fx inputs of a node, in argument order, each once."""
        seen: list = []
        for n in node.all_input_nodes:
            if n in self.active and n not in seen:
                seen.append(n)
        return seen

    def emit(self, name: str, kind: str, inputs: list, type_node: torch.fx.Node, params: Optional[list] = None,
             attrs: Optional[dict] = None, real_attrs: Optional[dict] = None) -> dict:
        entry = {"name": self.unique(name), "kind": kind, "inputs": [self.name[i] for i in inputs]}
        entry.update(self.type_fields(type_node))
        if params:
            entry["params"] = params
        if attrs:
            entry["attrs"] = attrs
        if real_attrs:
            entry["real_attrs"] = real_attrs
        self.nodes.append(entry)
        return entry

    def local_name(self, node: torch.fx.Node) -> str:
        """The name of a node: the path of a one-op module (Dropout, an activation),
        else the module path, then the fx name."""
        stack = node.meta.get("nn_module_stack") or {}
        cls = list(stack.values())[-1][1] if stack else ""
        cls = cls if isinstance(cls, str) else f"{cls.__module__}.{cls.__qualname__}"
        path, _ = module_path(node)
        if path and cls.startswith(table.SINGLE_OP_MODULES) and path not in self.used:
            return path
        return f"{path}.{node.name}" if path else node.name

    def param(self, placeholder: torch.fx.Node, owner: str) -> dict:
        """A graph param entry for the parameter placeholder read by module `owner`."""
        fqn = self.param_of[placeholder.name]
        names = self.aliases.get(fqn, [fqn])
        own = next((n for n in names if n.startswith(owner + ".") and "." not in n[len(owner) + 1:]), None)
        if own is None:
            own = next((n for n in names if n.startswith(owner + ".")), fqn)
        local = own[len(owner) + 1:] if own.startswith(owner + ".") else own
        val = self.value(placeholder)
        entry = {"name": local, "shape": [int(d) for d in val.shape], "dtype": DTYPES.get(val.dtype, str(val.dtype))}
        if val.dtype not in DTYPES:
            raise self.fail(placeholder, f"parameter '{fqn}' has dtype {val.dtype}, which is not supported")
        first = names[0]
        if own != first:
            entry["tied_to"] = first
        return entry

    def is_param(self, node: Any) -> bool:
        return isinstance(node, torch.fx.Node) and node.op == "placeholder" and node.name in self.param_of

    # --- the walk ------------------------------------------------------------
    def mark_active(self) -> None:
        """Every node that depends on a model input (a tensor placeholder that is no parameter or buffer)."""
        for node in self.graph.nodes:
            if node.op == "placeholder":
                if node.name in self.user_inputs and isinstance(self.value(node), torch.Tensor):
                    self.active.add(node)
            elif node.op == "call_function" and any(n in self.active and n not in self.promoted
                                                    for n in node.all_input_nodes):
                self.active.add(node)
            elif node.op == "call_function" and self.promote(node):
                self.active.add(node)

    def promote(self, node: torch.fx.Node) -> bool:
        """A parameterized op (GPT-2's position embedding) on a value that depends on no
        input: that value becomes a placeholder of the graph, so the op and its parameter stay."""
        if op_name(node) not in table.WITH_PARAMS or not any(self.is_param(n) for n in node.all_input_nodes):
            return False
        values = [n for n in node.all_input_nodes if not self.is_param(n)]
        if len(values) != 1 or not isinstance(self.value(values[0]), torch.Tensor):
            return False
        self.promoted.add(values[0])
        self.active.add(values[0])
        return True

    def run(self) -> dict:
        self.mark_active()
        groups = self.find_groups()
        done: set = set()
        outputs: list = []
        for node in self.graph.nodes:
            if node.op == "placeholder":
                self.placeholder(node)
            elif node.op == "output":
                outputs = [n for n in torch.fx.node.map_arg(node.args[0], lambda n: n).__iter__()] \
                    if isinstance(node.args[0], (list, tuple)) else [node.args[0]]
            elif node.op == "call_function":
                if node not in self.active:
                    continue  # folded: depends on no input
                if node in self.promoted:
                    path, _ = module_path(next(iter(node.users)))
                    self.name[node] = self.emit(f"{path}.input" if path else node.name, "placeholder", [], node)["name"]
                    continue
                group = groups.get(node)
                if group is not None:
                    if id(group) not in done and node is group.members[-1]:
                        done.add(id(group))
                        self.emit_group(group)
                    continue
                self.call(node)
            elif node.op == "get_attr":
                continue
        self.emit_outputs(outputs)
        _infer_groups(self.nodes)
        return {"format": FORMAT, "version": VERSION, "nodes": self.nodes}

    def placeholder(self, node: torch.fx.Node) -> None:
        if node not in self.active or not node.users:
            return  # an input the program never reads (Hugging Face's `labels` when `shift_labels` is given)
        entry = self.emit(node.name, "placeholder", [], node)
        self.name[node] = entry["name"]

    def emit_outputs(self, outputs: list) -> None:
        tensors = [o for o in outputs if isinstance(o, torch.fx.Node) and o in self.active]
        if not tensors:
            raise TraceError("trace: the model returns no tensor that depends on its inputs")
        kinds = {e["name"]: e["kind"] for e in self.nodes}
        losses = [o for o in tensors if kinds.get(self.name.get(o)) == "cross_entropy"]
        if losses:
            tensors = losses  # a model that computes its loss (given labels) is a training graph: it ends there
        for i, out in enumerate(tensors):
            if out not in self.name:
                raise self.fail(out, "a tuple of a split is returned whole")
            entry = {"name": self.unique("output" if i == 0 else f"output_{i}"), "kind": "output",
                     "inputs": [self.name[out]]}
            entry.update(self.type_fields(out))
            self.nodes.append(entry)

    # --- groups: modules and functions kept whole -----------------------------
    def find_groups(self) -> dict:
        """fx node -> its Group, for nodes made inside a kept-whole module or function.
        A function's nodes split further into one group per tensor it transforms."""
        by_key: dict = {}
        for node in self.graph.nodes:
            if node.op != "call_function" or node not in self.active:
                continue
            leaf = leaf_module(node)
            key, group = (("module", leaf[0]), Group(leaf[1], leaf[0])) if leaf else (None, None)
            if leaf is None and leaf_call(node) is not None:
                path, _ = module_path(node)
                key, group = ("call", path, node.meta.get("stack_trace")), Group(leaf_call(node), path)
            if key is None:
                continue
            group = by_key.setdefault(key, group)
            if is_identity(node) and not any(i in group.members for i in node.all_input_nodes):
                continue  # the group's input passed on (RMSNorm's cast to float32 that the residual reads)
            group.members.append(node)
        for group in _repeat_kv_groups(self.graph, self.active):
            by_key[("repeat_kv", group.members[-1])] = group
        groups: dict = {}
        for group in by_key.values():
            for part in self.components(group):
                for node in part.members:
                    groups[node] = part
        return groups

    def components(self, group: Group) -> list:
        """A function group split into its connected parts (rotary on q and on k)."""
        if group.kind != "rotary":
            return [group]
        members = set(group.members)
        parent = {n: n for n in group.members}

        def root(n):
            while parent[n] is not n:
                n = parent[n]
            return n

        for n in group.members:
            for i in n.all_input_nodes:
                if i in members:
                    parent[root(n)] = root(i)
        parts: dict = {}
        for n in group.members:
            parts.setdefault(root(n), Group(group.kind, group.path)).members.append(n)
        return list(parts.values())

    def emit_group(self, group: Group) -> None:
        members = set(group.members)
        active = group.members
        inputs: list = []
        for n in active:
            for i in n.all_input_nodes:
                if i in self.active and i not in members and i not in inputs:
                    inputs.append(i)
        leaving = [n for n in active if any(u not in members for u in n.users)]
        if len(leaving) != 1:
            raise self.fail(group.members[-1], f"{group.kind} '{group.path}' has {len(leaving)} results, expected 1")
        out = leaving[0]
        params, seen = [], set()
        for n in group.members:
            for i in n.all_input_nodes:
                if self.is_param(i) and i not in seen:
                    seen.add(i)
                    params.append(self.param(i, group.path))
        params.sort(key=lambda p: {"weight": 0, "bias": 1}.get(p["name"], 2))
        name = group.path if group.kind not in ("rotary", "repeat_kv") else f"{group.path}.{out.name}"
        entry = self.emit(name, group.kind, inputs, out, params, None, self.group_real_attrs(group))
        for n in active:
            self.name[n] = entry["name"]

    def group_real_attrs(self, group: Group) -> Optional[dict]:
        if group.kind == "rms_norm":
            module = self.model.get_submodule(group.path)
            eps = getattr(module, "variance_epsilon", getattr(module, "eps", None))
            return {"eps": float(eps)} if eps is not None else None
        if group.kind == "rotary":
            return {"theta": _rope_theta(self.model)}
        return None

    # --- single ops ----------------------------------------------------------
    def call(self, node: torch.fx.Node) -> None:
        from .trace_ops import map_op

        result = map_op(self, node)
        if result is None:
            return
        if self.unknown_ops == "keep":
            entry = self.emit(self.local_name(node), op_name(node), self.acts(node), node)
            self.name[node] = entry["name"]
            return
        raise self.fail(node, f"op aten.{op_name(node)} is not in shardsynth's op table "
                              f"({result}; trace(..., unknown_ops='keep') writes it for synth --unknown-ops=replicate)")

    def sdpa(self, node: torch.fx.Node) -> None:
        sdpa_nodes(self, node)


def _repeat_kv_groups(graph: torch.fx.Graph, active: set) -> list:
    """Hugging Face's repeat_kv: x[:, :, None].expand(b, kv, n, s, d).reshape(b, kv * n, s, d)."""
    groups = []
    for node in graph.nodes:
        if node not in active or op_name(node) not in ("reshape", "view", "_unsafe_view"):
            continue
        expand = node.args[0]
        if not isinstance(expand, torch.fx.Node) or op_name(expand) != "expand" or len(expand.users) != 1:
            continue
        unsqueeze = expand.args[0]
        if not isinstance(unsqueeze, torch.fx.Node) or op_name(unsqueeze) != "unsqueeze" or len(unsqueeze.users) != 1:
            continue
        x = unsqueeze.args[0].meta["val"].shape
        out = node.meta["val"].shape
        if len(x) == 4 and len(out) == 4 and out[0] == x[0] and out[2:] == x[2:] and out[1] % x[1] == 0:
            group = Group("repeat_kv", module_path(node)[0])
            group.members.extend([unsqueeze, expand, node])
            groups.append(group)
    return groups


def _infer_groups(nodes: list) -> None:
    """A conv1d read only by equal splits of its features is a fused projection
    (GPT-2's c_attn, q | k | v): it gets attrs groups = the number of parts."""
    readers: dict = {}
    for n in nodes:
        for i in n["inputs"]:
            readers.setdefault(i, []).append(n)
    for n in nodes:
        if n["kind"] != "conv1d":
            continue
        parts = {tuple(r["attrs"]["sections"]) if r["kind"] == "split" else None for r in readers.get(n["name"], [])}
        if len(parts) == 1 and None not in parts and next(iter(parts))[0] > 1:
            n["attrs"] = {"groups": [next(iter(parts))[0]]}


def _parameter_aliases(model: torch.nn.Module) -> dict:
    """Parameter FQN -> every FQN of the same tensor, in registration order (GPT-2:
    transformer.wte.weight -> [transformer.wte.weight, lm_head.weight])."""
    by_id: dict = {}
    for name, p in model.named_parameters(remove_duplicate=False):
        by_id.setdefault(id(p), []).append(name)
    return {name: names for names in by_id.values() for name in names}


def _rope_theta(model: torch.nn.Module) -> float:
    config = getattr(model, "config", None)
    theta = getattr(config, "rope_theta", None)
    if theta is None:
        theta = (getattr(config, "rope_parameters", None) or {}).get("rope_theta")
    if theta is None:
        raise TraceError("trace: a rotary embedding, but the model's config has no rope_theta")
    return float(theta)
