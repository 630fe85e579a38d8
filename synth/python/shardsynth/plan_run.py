"""Run a plan as it was priced: the model's exported program (shardsynth.trace's
torch.export graph) executed ATen op by ATen op on DTensors, with every
resharding the plan's, where the plan puts it.

- Each fx node belongs to one graph node (the tracer's naming), or to none
  (values that depend on no input: masks, rotary tables, which run on whole
  tensors and join DTensor ops as replicated).
- A value crossing from graph node P to graph node C is first checked to be in
  P's planned spec (a pending partial sum included); it is then redistributed
  to the spec C reads operand k in (C's `fwd_pre` sync, else P's spec), once
  per (P, C, k). Inside a graph node DTensor runs the ops on what it is given.
- A parameter is a leaf DTensor in its stored spec; each use moves it to the
  spec its graph node reads it in, and the gradient goes back the plan's way
  (`_Use`): a stored parameter's straight into its `:grad` spec, a tied use's
  (lm_head) resolved to the use's spec, moved to the stored spec, then to the
  stored parameter's gradient spec. An op reading a moved parameter runs
  under activation checkpointing, so the move runs again for its backward,
  as FSDP's gather and the cost model's second gather do.
- The outputs leave whole (`full_tensor`), which the plan does not price (an
  output may end in any spec); `unplanned()` marks those gathers.
A value that arrives in another spec than planned is redistributed there too
and listed in `PlanRun.unplanned_moves` (a place where DTensor's own choice
differs from the plan's), so a count that differs says where.
"""
from __future__ import annotations

import contextlib
import math
import operator

from typing import Any, Iterator

import torch
import torch.fx
from torch import nn
from torch.utils.weak import WeakIdKeyDictionary

from .local_ops import repeat_kv_local, run_local, wants_local
from .plan import PlanError, Spec, parse_spec, placements, spec_table
from .plan_sdpa import run_sdpa
from .reshard import full, move, spec_of

_SPLITS = (torch.ops.aten.split.Tensor, torch.ops.aten.split_with_sizes.default)
_SDPA = (torch.ops.aten.scaled_dot_product_attention.default,)
_RESHAPES = (torch.ops.aten.view.default, torch.ops.aten.reshape.default, torch.ops.aten._unsafe_view.default)
_OUTPUT_GATHER = [False]  # set while the outputs are gathered whole (not plan bytes)


@contextlib.contextmanager
def unplanned() -> Iterator[None]:
    """Collectives issued inside are not the plan's (the outputs gathered for the caller)."""
    _OUTPUT_GATHER[0] = True
    try:
        yield
    finally:
        _OUTPUT_GATHER[0] = False


def in_unplanned() -> bool:
    return _OUTPUT_GATHER[0]


def _spec(value: Any, mesh: Any) -> Spec:
    """The spec a DTensor is laid out in (reshard.spec_of), every dim described."""
    return spec_of(value.placements, value.dim(), tuple(int(n) for n in mesh.shape))


class _Use(torch.autograd.Function):
    """stored parameter -> its use spec; backward: the gradient along `grad_path` (a list of specs).
    Every move is synth's (reshard.move)."""

    @staticmethod
    def forward(ctx: Any, stored: Any, mesh: Any, use: Spec, grad_path: list) -> Any:
        ctx.mesh, ctx.grad_path = mesh, grad_path
        with torch.no_grad():
            return move(stored, mesh, use)

    @staticmethod
    def backward(ctx: Any, grad: Any) -> Any:
        for spec in ctx.grad_path:
            grad = move(_plain_partial(grad), ctx.mesh, spec)
        return grad, None, None, None


class _Edge(torch.autograd.Function):
    """A value read by one consumer: producer's spec -> the operand's spec; backward: this use's
    gradient -> the producer's spec without partial sums, resolved here, before autograd adds
    the gradients of the value's uses (the cost model prices each edge's gradient apart)."""

    @staticmethod
    def forward(ctx: Any, value: Any, mesh: Any, want: Spec, back: Spec) -> Any:
        ctx.mesh, ctx.back = mesh, back
        with torch.no_grad():
            return move(value, mesh, want)

    @staticmethod
    def backward(ctx: Any, grad: Any) -> Any:
        return move(_plain_partial(grad), ctx.mesh, ctx.back), None, None, None


class PlanRun:
    """The exported program of `model` run under `schedule` on `mesh` (see the module's doc)."""

    def __init__(self, model: nn.Module, schedule: dict, graph: dict, mesh: Any):
        self.model, self.mesh = model, mesh
        self.program = model.shardsynth_program
        self.names: dict = model.shardsynth_fx_names
        signature = self.program.graph_signature
        self.param_of = dict(signature.inputs_to_parameters)
        self.buffer_of = dict(signature.inputs_to_buffers)
        self.constant_of = dict(getattr(signature, "inputs_to_lifted_tensor_constants", {}) or {})
        self.user_inputs = [n.name for n in self.program.graph_module.graph.nodes if n.op == "placeholder"
                            and n.name not in self.param_of and n.name not in self.buffer_of
                            and n.name not in self.constant_of]  # in the order of the flattened (args, kwargs)
        self.nodes = {n["name"]: n for n in graph["nodes"]}
        self.specs = spec_table(schedule, mesh.ndim)
        self.pre: dict = {}    # (graph node, operand) -> spec it reads after its fwd_pre sync
        self.post: dict = {}   # graph node -> [(from, to)] of its fwd_post syncs
        for d in schedule.get("directives", []):
            if d.get("kind") != "sync":
                continue
            src, dst = (parse_spec(t, mesh.ndim) for t in d["sync_op_or_fn"].split("->"))
            if d["mode"] == "fwd_pre":
                self.pre[(d["node"], max(int(d.get("arg", -1)), 0))] = dst
            else:
                self.post.setdefault(d["node"], []).append((src, dst))
        self.aliases = _aliases(model)
        self.record: Any = None          # a dict: every fx node's value by name (for reading a difference)
        self.unplanned_moves: list = []  # (what, from placements, to placements) of moves the plan does not make
        self.tied = {f"{n['name']}.{p['name']}": p["tied_to"] for n in graph["nodes"] for p in n.get("params", [])
                     if p.get("tied_to")}
        for n in graph["nodes"]:
            for p in n.get("params", []):
                name = f"{n['name']}.{p['name']}"
                if not p.get("tied_to"):
                    self.optimizer_moves(name, model.get_parameter(name))

    def optimizer_moves(self, name: str, param: Any) -> None:
        """Registers a parameter whose optimizer state lives in another spec than the parameter."""
        stored = self.specs.get(name + ":stored", self.specs[name])
        grad = self.specs.get(name + ":grad", stored)
        state = self.specs.get(name + ":state", grad)
        if state != stored:
            plan_optimizer(param, self.mesh, state, stored)

    # --- specs ----------------------------------------------------------------
    def place(self, spec: Spec, value: Any) -> list:
        return placements(spec, value.dim(), tuple(self.mesh.shape))

    def result_spec(self, name: str) -> Spec:
        """The spec a node's op yields: its fwd_post's start when that resolves into its output spec."""
        out = self.specs[name]
        for src, dst in self.post.get(name, []):
            if dst == out and src != out:
                return src
        return out

    def operand_spec(self, consumer: str, k: int) -> Spec:
        if (consumer, k) in self.pre:
            return self.pre[(consumer, k)]
        producer = self.nodes[consumer]["inputs"][k]
        spec = self.specs[producer]
        if self.nodes[consumer]["kind"] == "output":
            for src, dst in self.post.get(producer, []):
                if src == spec:
                    spec = dst
        return spec

    # --- values ---------------------------------------------------------------
    def to_dtensor(self, value: Any, spec: Spec) -> Any:
        """A whole tensor every rank holds, as a DTensor in `spec` (a slice: nothing is sent)."""
        from torch.distributed.tensor import DTensor, Replicate

        whole = value if isinstance(value, DTensor) else \
            DTensor.from_local(value, self.mesh, [Replicate()] * self.mesh.ndim, run_check=False)
        return move(whole, self.mesh, spec)

    def produced(self, name: str, value: Any) -> Any:
        """Producer `name`'s value in its output spec: checked against its result spec, then resolved."""
        if name in self.out_cache:
            return self.out_cache[name]
        value = _plain_partial(value)
        result = full(self.result_spec(name), value.dim())
        if _spec(value, self.mesh) != result:
            self.unplanned_moves.append((name, tuple(value.placements), tuple(self.place(result, value))))
        for spec in (result, self.specs[name]):
            if _spec(value, self.mesh) != full(spec, value.dim()):
                value = _Edge.apply(value, self.mesh, spec, _no_partial(_spec(value, self.mesh)))
        self.out_cache[name] = value
        return value

    def operand(self, producer: str, consumer: str, value: Any) -> Any:
        k = self.nodes[consumer]["inputs"].index(producer)
        key = (producer, consumer, k)
        if key not in self.in_cache:
            value = self.produced(producer, value)
            want = self.operand_spec(consumer, k)
            back = _no_partial(self.specs[producer])
            self.in_cache[key] = _Edge.apply(value, self.mesh, want, back)
        return self.in_cache[key]

    def param_name(self, fqn: str, consumer: str) -> str:
        """The graph's name (node.param) of parameter `fqn` as graph node `consumer` reads it."""
        params = [f"{consumer}.{p['name']}" for p in self.nodes[consumer].get("params", [])]
        for name in params:
            if name in self.aliases.get(fqn, [fqn]):
                return name
        raise PlanError(f"plan for another graph: node '{consumer}' reads parameter '{fqn}', which it does not list")

    def param_use(self, fqn: str, consumer: str) -> Any:
        """The parameter as `consumer` reads it (moved from its stored spec by _Use)."""
        param = self.params[fqn]
        name = self.param_name(fqn, consumer)
        use = self.specs[name]
        stored = _spec(param, self.mesh)
        if name in self.tied:  # resolved to the use's spec, moved to the stored one, then to its gradient's
            target = self.tied[name]
            grad = self.specs.get(target + ":grad", self.specs.get(target + ":stored", self.specs[target]))
            path = [_no_partial(self.specs[name]), stored, grad]
        else:  # reduced straight into its gradient's spec
            grad = self.specs.get(name + ":grad", self.specs.get(name + ":stored", self.specs[name]))
            path = [grad]
        return _Use.apply(param, self.mesh, use, path)

    # --- the run --------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.params = dict(self.model.named_parameters(remove_duplicate=False))
        self.buffers = dict(self.model.named_buffers(remove_duplicate=False))
        self.out_cache: dict = {}
        self.in_cache: dict = {}
        self.inputs: dict = {}
        import torch.utils._pytree as pytree

        user = pytree.tree_flatten((args, kwargs))[0]
        env: dict = {}
        outputs = None
        for node in self.program.graph_module.graph.nodes:
            if node.op == "placeholder":
                env[node] = self.placeholder(node, user)
            elif node.op == "call_function":
                if node.target is torch.ops.aten._assert_tensor_metadata.default:
                    env[node] = None  # export's check of an input's dtype: nothing to run on DTensors
                    continue
                env[node] = self.call(node, env)
                if self.record is not None:
                    self.record[node.name] = env[node]
            elif node.op == "output":
                outputs = node.args[0]
        flat = self.leave(list(torch.fx.node.map_arg(outputs, lambda n: self.final(n, env))))
        spec = getattr(self.program.call_spec, "out_spec", None)
        return pytree.tree_unflatten(flat, spec) if spec is not None else flat

    def placeholder(self, node: torch.fx.Node, user: list) -> Any:
        if node.name in self.param_of:
            return ("param", self.param_of[node.name])
        if node.name in self.buffer_of:
            return self.buffers[self.buffer_of[node.name]]
        if node.name in self.constant_of:
            return getattr(self.program, "constants", {}).get(self.constant_of[node.name])
        i = self.user_inputs.index(node.name)
        return user[i] if i < len(user) else None  # whole: a graph node reads it in its spec (value())

    def input_value(self, fx_name: str, name: str, whole: torch.Tensor) -> Any:
        """A model input as the plan's graph reads it: in its spec (a slice, nothing sent), once per call."""
        if fx_name not in self.inputs:
            self.inputs[fx_name] = self.to_dtensor(whole, self.specs[name])
        return self.inputs[fx_name]

    def call(self, node: torch.fx.Node, env: dict) -> Any:
        graph_node = self.names.get(node.name)
        if self.is_graph_split(node):
            return None  # its parts are taken by the graph's split nodes (split_part)
        if graph_node is not None and node.target is operator.getitem and self.nodes[graph_node]["kind"] == "split":
            return self.split_part(node, graph_node, env)

        def value(i: torch.fx.Node) -> Any:
            v = env[i]
            if isinstance(v, tuple) and len(v) == 2 and v[0] == "param":
                if graph_node is None:
                    raise PlanError(f"op {node.target} reads parameter '{v[1]}' outside the plan's graph")
                return self.param_use(v[1], graph_node)
            source = self.names.get(i.name)
            if graph_node is None or source is None or source == graph_node:
                return v
            if self.nodes[source]["kind"] == "placeholder" and isinstance(v, torch.Tensor) and not hasattr(v, "placements"):
                v = self.input_value(i.name, source, v)  # ops outside the graph (masks) read it whole
            if not hasattr(v, "placements"):
                return v
            return self.operand(source, graph_node, v)

        if graph_node is not None and node.target in _SDPA:
            return run_sdpa(self, node, graph_node, env)  # its decomposition's nodes, each planned
        if graph_node is not None and self.nodes[graph_node]["kind"] == "placeholder":
            # a folded value the graph reads as an input: whole, and in its spec to the graph (value())
            return node.target(*torch.fx.node.map_arg(node.args, lambda i: env[i]),
                               **torch.fx.node.map_arg(node.kwargs, lambda i: env[i]))
        params = {i for i in node.all_input_nodes if isinstance(env[i], tuple) and env[i][:1] == ("param",)}
        if params and graph_node is not None and any(self.moves(env[i][1], graph_node) for i in params):
            return self.checkpointed(node, env, value)
        args = torch.fx.node.map_arg(node.args, value)
        kwargs = torch.fx.node.map_arg(node.kwargs, value)
        kind = self.nodes[graph_node]["kind"] if graph_node is not None else None
        if kind == "view" and node.target in _RESHAPES:
            local = self.local_view(node, graph_node, args[0])
            if local is not None:
                return local
        if kind == "repeat_kv" and node.target in _RESHAPES and list(node.meta["val"].shape) == self.nodes[graph_node]["shape"]:
            source = node
            while self.names.get(source.all_input_nodes[0].name) == graph_node:
                source = source.all_input_nodes[0]
            local = repeat_kv_local(value(source.all_input_nodes[0]), self.result_spec(graph_node),
                                   self.nodes[graph_node]["shape"], self.mesh)
            if local is not None:
                return local
        return _run_op(node.target, args, kwargs)

    def local_view(self, node: torch.fx.Node, graph_node: str, x: Any) -> Any:
        """A view node's reshape on the local shard, into the plan's result spec, as shard-run runs it:
        the view's rule admits only specs whose local data a local reshape lays out (DTensor cannot
        split a dim sharded over several axes between two dims). None when the shapes do not fit."""
        from torch.distributed.tensor import DTensor

        if not hasattr(x, "placements") or x.dim() == 0:
            return None
        shape = tuple(node.meta["val"].shape)
        place = self.place(self.result_spec(graph_node), node.meta["val"])
        local = list(shape)
        for axis, p in enumerate(place):
            if hasattr(p, "dim") and not p.is_partial() and not p.is_replicate():
                if local[p.dim] % self.mesh.size(axis):
                    return None
                local[p.dim] //= self.mesh.size(axis)
        if math.prod(local) != x.to_local().numel():
            return None
        return DTensor.from_local(x.to_local().reshape(local), self.mesh, place, run_check=False, shape=shape,
                                  stride=torch.empty(shape, device="meta").stride())

    def is_graph_split(self, node: torch.fx.Node) -> bool:
        """An aten.split whose parts are all graph split nodes (read through getitem)."""
        return (node.name not in self.names and node.target in _SPLITS and bool(node.users)
                and all(u.target is operator.getitem and u.name in self.names for u in node.users))

    def split_part(self, node: torch.fx.Node, graph_node: str, env: dict) -> Any:
        """One part of an equal split of the last dim, from the operand in the plan's spec. A last
        dim sharded in as many blocks as there are parts (GPT-2's fused q|k|v) holds its part of
        every block locally, so the part is cut from the local shard, as the op's rule says
        (DTensor would gather the dim first): the same axes shard the part, in one block.
        Otherwise DTensor splits it."""
        from dataclasses import replace

        from torch.distributed.tensor import DTensor

        split, index = node.args
        x = split.args[0]
        value = self.operand(self.names[x.name], graph_node, env[x])
        sections = self.nodes[graph_node]["attrs"]["sections"][0]
        spec = _spec(value, self.mesh)
        if not spec.dims[-1] or spec.blocks[-1] != sections:
            return split.target(value, *split.args[1:], **split.kwargs)[index]
        part = value.to_local().chunk(sections, dim=-1)[index]
        shape = node.meta["val"].shape
        return DTensor.from_local(part, self.mesh, self.place(replace(spec, blocks=spec.blocks[:-1] + (1,)), part),
                                  run_check=False, shape=shape, stride=torch.empty(shape, device="meta").stride())

    def moves(self, fqn: str, consumer: str) -> bool:
        param = self.params[fqn]
        return _spec(param, self.mesh) != full(self.specs[self.param_name(fqn, consumer)], param.dim())

    def checkpointed(self, node: torch.fx.Node, env: dict, value: Any) -> Any:
        """An op reading a moved parameter: under checkpointing, so its backward moves the parameter again."""
        from torch.utils.checkpoint import checkpoint

        inputs = [i for i in node.all_input_nodes if not (isinstance(env[i], tuple) and env[i][:1] == ("param",))]
        ready = {i: value(i) for i in inputs}
        tensors = [ready[i] for i in inputs]
        params = [i for i in node.all_input_nodes if i not in ready]

        def run(*values: Any) -> Any:
            local = dict(zip(inputs, values))
            for i in params:
                local[i] = value(i)
            return _run_op(node.target, torch.fx.node.map_arg(node.args, lambda i: local[i]),
                           torch.fx.node.map_arg(node.kwargs, lambda i: local[i]))

        return checkpoint(run, *tensors, use_reentrant=False)

    def final(self, node: torch.fx.Node, env: dict) -> Any:
        v = env[node]
        name = self.names.get(node.name)
        output = next((n["name"] for n in self.nodes.values() if n["kind"] == "output" and name in n["inputs"]), None)
        if name is None or output is None or not hasattr(v, "placements"):
            return v
        return self.operand(name, output, v)

    def leave(self, value: Any) -> Any:
        from torch.distributed.tensor import DTensor

        if isinstance(value, DTensor):
            with unplanned():
                return value.full_tensor()
        if isinstance(value, (list, tuple)):
            return type(value)(self.leave(v) for v in value)
        return value


# The optimizer's side of a plan whose optimizer state is kept apart from the
# parameter (ZeRO-1/2: `:state` more sharded than `:stored`): parameter ->
# (mesh, state placements, stored placements). Any torch.optim optimizer
# stepping such a parameter updates its state shard, then moves it back to
# the stored spec, as the cost model prices (costs/param_storage.hpp).
_OPTIMIZER_MOVES: Any = WeakIdKeyDictionary()
_HOOKS: list = []


def plan_optimizer(param: Any, mesh: Any, state: list, stored: list) -> None:
    """Registers `param`'s optimizer moves, specs (once per process, the global optimizer hooks)."""
    _OPTIMIZER_MOVES[param] = (mesh, state, stored)
    if not _HOOKS:
        from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook

        _HOOKS.append(register_optimizer_step_pre_hook(_to_state))
        _HOOKS.append(register_optimizer_step_post_hook(_to_stored))


def _swap(param: Any, value: Any) -> None:
    """The DTensor parameter now holds `value`'s shard and placements (same global tensor)."""
    param._local_tensor = value._local_tensor
    param._spec = value._spec


def _planned(optimizer: Any) -> list:
    return [p for group in optimizer.param_groups for p in group["params"] if p in _OPTIMIZER_MOVES]


def _to_state(optimizer: Any, args: Any, kwargs: Any) -> None:
    """Before the step: gradient and parameter sliced to the state spec (nothing is sent)."""
    with torch.no_grad():
        for p in _planned(optimizer):
            mesh, state, _ = _OPTIMIZER_MOVES[p]
            if p.grad is not None:
                p.grad = move(p.grad, mesh, state)
            _swap(p, move(p, mesh, state))


def _to_stored(optimizer: Any, args: Any, kwargs: Any) -> None:
    """After the step: the updated shard moved back to the stored spec (the plan's gather)."""
    with torch.no_grad():
        for p in _planned(optimizer):
            mesh, _, stored = _OPTIMIZER_MOVES[p]
            _swap(p, move(p, mesh, stored))


def _plain_partial(value: Any) -> Any:
    """A vocabulary-sharded embedding's masked partial sum as a plain one (its mask applied
    here, nothing sent), so that each reader resolves its own copy, as each edge is priced."""
    from torch.distributed.tensor import DTensor, Partial
    from torch.distributed.tensor.placement_types import _MaskPartial

    masked = [p for p in value.placements if isinstance(p, _MaskPartial)]
    if not masked:
        return value
    local = value.to_local().clone()
    for p in masked:
        p.mask_buffer.apply_mask(local)
        p.mask_buffer.release_mask()
    places = [Partial() if isinstance(p, _MaskPartial) else p for p in value.placements]
    return DTensor.from_local(local, value.device_mesh, places, run_check=False, shape=value.shape,
                              stride=value.stride())


def _run_op(target: Any, args: Any, kwargs: Any) -> Any:
    """One ATen op on DTensors: a matrix product that DTensor would not run as planned on the
    local shards (local_ops.py), everything else by DTensor."""
    if wants_local(target, args):
        out = run_local(target, args, kwargs)
        if out is not None:
            return out
    return target(*args, **kwargs)


def _no_partial(spec: Spec) -> Spec:
    from dataclasses import replace

    return replace(spec, partial=())


def _aliases(model: nn.Module) -> dict:
    by_id: dict = {}
    for name, p in model.named_parameters(remove_duplicate=False):
        by_id.setdefault(id(p), []).append(name)
    return {name: names for names in by_id.values() for name in names}
