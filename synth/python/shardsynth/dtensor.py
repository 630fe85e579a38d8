"""Apply a shardsynth plan to an nn.Module with DTensor.

    mesh = init_device_mesh("cpu", (8,))
    graph = shardsynth.trace(model, (ids,))    # keeps the exported program on the model
    model = parallelize(model, plan, mesh)     # plan: solve()'s result, a schedule dict or file
    loss = F.cross_entropy(model(ids).logits.flatten(0, 1), labels.flatten())
    loss.backward(); torch.optim.AdamW(model.parameters()).step()

Every parameter becomes a DTensor in the placement the plan stores it in
(its `:stored` spec where storage differs from use: FSDP and ZeRO plans).
A model traced by shardsynth.trace (for this graph) then runs its exported
program op by op with the plan's reshardings only (plan_run.py): what it
sends, forward, backward and optimizer step, is what synth priced. A model
without that program runs as a module with reshardings at module
boundaries instead: each parameter redistributed to the spec the plan uses
it in while its module runs, the output of every module that is a node of
the plan's graph redistributed to that node's spec (Slapo's `.sync` at
module boundaries), DTensor choosing inside a module. Either way values the
model makes itself (masks, rotary tables) join as replicated (DTensor's
implicit replication, turned on for the process), and the outputs leave as
whole tensors, so the training loop around the model stays as it was.
Graph parameter `node.param` is the module parameter of that name
(shardsynth.trace names nodes by module path).
"""
from __future__ import annotations

from typing import Any, Optional, Union

import torch
from torch import nn

from .plan import PlanError, check_mesh, load_schedule, placements, spec_table, stored_spec


def parameter_placements(model: nn.Module, specs: dict, mesh: Any) -> dict:
    """Parameter name -> placements; raises PlanError before anything changes."""
    out = {}
    for fqn, param in model.named_parameters():
        spec = stored_spec(specs, fqn)
        try:
            out[fqn] = placements(spec, param.dim(), tuple(mesh.shape))
        except PlanError as e:
            raise PlanError(f"parameter '{fqn}' of shape {list(param.shape)}: {e}") from None
        _check_divides(fqn, param.shape, out[fqn], mesh)
    return out


def _check_divides(name: str, shape: Any, placement: list, mesh: Any) -> None:
    """Plans shard only extents the mesh axes divide: anything else is a plan for other sizes."""
    from torch.distributed.tensor import Shard

    extents = list(shape)
    for axis, p in enumerate(placement):
        if isinstance(p, Shard) or type(p).__name__ == "_StridedShard":
            size = mesh.shape[axis]
            if extents[p.dim] % size:
                raise PlanError(f"plan for another graph: '{name}' of shape {list(shape)} cannot be sharded "
                                f"on dim {p.dim} over {size} devices")
            extents[p.dim] //= size


def activation_placements(model: nn.Module, schedule: dict, specs: dict, graph: Optional[dict], mesh: Any) -> dict:
    """Module path -> the spec its output leaves in, for modules that are nodes of the plan:
    the spec every reader's `fwd_pre` sync asks for when they agree (so a reader that is no
    module, such as the view into heads, gets its input as planned), else the node's own.
    A pending partial sum is resolved there (the all-reduce the plan runs at its reader, run
    at the module's boundary, as Megatron's row-parallel layers do)."""
    from dataclasses import replace

    wanted = _reader_specs(schedule, graph, mesh.ndim)
    out = {}
    for path, _ in model.named_modules():
        spec = specs.get(path)
        if path and spec is not None:
            out[path] = replace(wanted.get(path, spec), partial=())
    return out


def _reader_specs(schedule: dict, graph: Optional[dict], mesh_rank: int) -> dict:
    """Producer node -> the one spec all its readers' fwd_pre syncs ask for (producers whose readers agree)."""
    from .plan import parse_spec

    if graph is None:
        return {}
    inputs = {n["name"]: n.get("inputs", []) for n in graph["nodes"]}
    readers: dict = {}
    for n in graph["nodes"]:
        for i in n.get("inputs", []):
            readers.setdefault(i, []).append(n["name"])
    asks: dict = {}
    for d in schedule.get("directives", []):
        if d.get("kind") == "sync" and d.get("mode") == "fwd_pre" and d["node"] in inputs:
            args = inputs[d["node"]]
            arg = int(d.get("arg", 0))
            if arg < len(args):
                asks.setdefault(args[arg], []).append(parse_spec(d["sync_op_or_fn"].split("->")[1], mesh_rank))
    return {p: specs[0] for p, specs in asks.items()
            if len(specs) == len(readers.get(p, [])) and all(s == specs[0] for s in specs)}


def parallelize(model: nn.Module, plan: Union[dict, str], device_mesh: Any, graph: Optional[dict] = None) -> nn.Module:
    """The model with every parameter a DTensor in the plan's placement, run as described above.
    `graph` (default: the one shardsynth.trace left on the model) places each module's output
    where its readers' syncs want it. Raises PlanError (one line) when the plan is for another
    mesh or graph; nothing is applied then."""
    from torch.distributed.tensor import distribute_tensor

    schedule = load_schedule(plan)
    check_mesh(schedule, device_mesh)
    specs = spec_table(schedule, device_mesh.ndim)
    params = parameter_placements(model, specs, device_mesh)
    graph = graph if graph is not None else getattr(model, "shardsynth_graph", None)
    outputs = activation_placements(model, schedule, specs, graph, device_mesh)
    inputs = _input_specs(schedule, specs)
    for fqn, placement in params.items():
        owner, _, name = fqn.rpartition(".")
        module = model.get_submodule(owner)
        old = getattr(module, name)
        new = nn.Parameter(distribute_tensor(old.detach(), device_mesh, placement), requires_grad=old.requires_grad)
        module.register_parameter(name, new)
    _retie(model)
    if getattr(model, "shardsynth_program", None) is not None and graph == getattr(model, "shardsynth_graph", None):
        _run_as_planned(model, schedule, graph, device_mesh)
        return model
    _gather_for_use(model, specs, device_mesh)
    for path, spec in outputs.items():
        model.get_submodule(path).register_forward_hook(_redistribute_output(spec, device_mesh))
    _wrap_forward(model, inputs, device_mesh)
    return model


def _run_as_planned(model: nn.Module, schedule: dict, graph: dict, mesh: Any) -> None:
    """forward: the traced program run op by op under the plan (plan_run.py)."""
    from torch.distributed.tensor import DTensor
    from .plan_run import PlanRun

    run = PlanRun(model, schedule, graph, mesh)
    model.shardsynth_run = run
    DTensor._op_dispatcher._allow_implicit_replication = True  # the folded values (masks, rotary tables) join replicated
    model.forward = run


def _gather_for_use(model: nn.Module, specs: dict, mesh: Any) -> None:
    """A parameter stored apart from its use (FSDP, ZeRO-3) is redistributed to its use spec
    while its module runs, as FSDP gathers it: autograd carries the gradient back to the
    stored placement. Each use of a tied parameter gets its own use spec."""
    from .plan import placements as to_placements

    for path, module in model.named_modules():
        wanted = {}
        for name, param in module.named_parameters(recurse=False, remove_duplicate=False):
            spec = specs.get(f"{path}.{name}" if path else name)
            if spec is None:
                continue
            use = tuple(to_placements(spec, param.dim(), mesh.ndim))
            if use != tuple(param.placements):
                wanted[name] = list(use)
        if wanted:
            module.register_forward_pre_hook(_swap_in(wanted, mesh))
            module.register_forward_hook(_swap_out(list(wanted)))


def _swap_in(wanted: dict, mesh: Any):
    def hook(module: nn.Module, args: Any) -> None:
        stored = {}
        for name, use in wanted.items():
            param = module._parameters[name]
            stored[name] = param
            module._parameters[name] = param.redistribute(mesh, use)  # a tensor of the graph, not a leaf
        module._shardsynth_stored = stored

    return hook


def _swap_out(names: list):
    def hook(module: nn.Module, args: Any, output: Any) -> None:
        for name in names:
            module._parameters[name] = module._shardsynth_stored[name]
        del module._shardsynth_stored

    return hook


def _input_specs(schedule: dict, specs: dict) -> list:
    """The specs of the graph's placeholders, in graph order (the model's tensor inputs, in call order)."""
    names = [e["tensor"] for e in schedule.get("specs", [])]
    return [specs[n] for n in names if n == "input_ids" or n.endswith(".input")][:1] or []


def _retie(model: nn.Module) -> None:
    """Hugging Face ties lm_head.weight to the embedding by sharing the Parameter: share the new one."""
    tie = getattr(model, "tie_weights", None)
    if callable(tie) and getattr(getattr(model, "config", None), "tie_word_embeddings", False):
        out, emb = model.get_output_embeddings(), model.get_input_embeddings()
        if out is not None and emb is not None:
            out.weight = emb.weight


def _redistribute_output(spec: Any, mesh: Any):
    from .plan import placements as to_placements

    def hook(module: nn.Module, args: Any, output: Any) -> Any:
        from torch.distributed.tensor import DTensor

        if isinstance(output, DTensor):
            return output.redistribute(mesh, to_placements(spec, output.dim(), mesh.ndim))
        return output

    return hook


def _wrap_forward(model: nn.Module, input_specs: list, mesh: Any) -> None:
    """forward: tensor inputs -> DTensors (first one in the plan's input spec, others replicated),
    the model under implicit replication, DTensor outputs -> whole tensors."""
    from torch.distributed.tensor import DTensor, Replicate, distribute_tensor
    from .plan import placements as to_placements

    inner = model.forward

    def enter(value: Any, first: bool) -> Any:
        if not isinstance(value, torch.Tensor) or isinstance(value, DTensor):
            return value
        spec = input_specs[0] if first and input_specs else None
        place = to_placements(spec, value.dim(), mesh.ndim) if spec else [Replicate()] * mesh.ndim
        return distribute_tensor(value, mesh, place)

    def leave(value: Any) -> Any:
        if isinstance(value, DTensor):
            return value.full_tensor()
        if isinstance(value, dict):
            for key in list(value.keys()):
                value[key] = leave(value[key])
            return value
        if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
            return type(value)(leave(v) for v in value)
        return value

    def forward(*args: Any, **kwargs: Any) -> Any:
        args = tuple(enter(a, i == 0) for i, a in enumerate(args))
        kwargs = {k: enter(v, False) for k, v in kwargs.items()}
        return leave(inner(*args, **kwargs))

    # Tensors the model makes itself (masks, rotary tables), and the ones autograd saves of
    # them for the backward pass, which runs outside any context, join as replicated: for
    # the whole process, as DTensor's implicit_replication() does for a block.
    DTensor._op_dispatcher._allow_implicit_replication = True

    model.forward = forward
