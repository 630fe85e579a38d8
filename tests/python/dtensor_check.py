"""shardsynth.parallelize on real torch.distributed: 8 CPU ranks with gloo.

    python dtensor_check.py PACKAGE_DIR [--models gpt2,llama,qwen2,mistral] [--meshes 8,2x4]
                            [--plans optimum,megatron,fsdp,zero1,random] [--seeds 7,8,9]
                            [--grid full|half|cover]

The parent traces each tiny `transformers` model (built from its config,
random weights, eager attention) once and solves it for every mesh and plan
kind with shardsynth.solve; then 8 spawned ranks run every case: the model
parallelized by the plan against the unsharded model on the same weights,
its logits, then 3 AdamW steps (losses and every parameter), and the first
step's collectives as CommDebugMode counts them (comm_count.CollectiveCounter)
against the plan's (shardsynth._native.collectives), per phase and kind, in
count and bytes. Each rank traces its own copy (parallelize runs the
exported program op by op). One line per case, then "N passed, M failed";
the exit code is 1 when any failed.
"""
from __future__ import annotations

import argparse
import copy
import warnings
import os
import socket
import sys
from typing import Any

import torch

LOGITS_RTOL = 1e-5   # max |sharded - whole| / max |whole| of the logits
LOSS_RTOL = 1e-5     # the same for each step's loss
PARAM_ATOL = 1e-5    # max |sharded - whole| of each parameter after 3 steps (weights are about 0.02)
LR, EPS = 1e-3, 1e-3  # Adam's eps at 1e-3: with the default 1e-8 the update of a gradient near 0 is near
#                       lr * sign(grad), and a sum that the shards round differently could flip it by 2 lr
BATCH, SEQ, VOCAB = 8, 16, 128
LAYERS = 1  # one block: DTensor's per-op dispatch on 8 processes sharing the machine's cores is the test's cost


def build(name: str) -> torch.nn.Module:
    """A tiny model of each family, seeded: the same weights in every process. `NAME_sdpa`
    builds it with attn_implementation="sdpa" (PyTorch's fused attention), else eager."""
    import transformers as tf

    torch.manual_seed(0)
    name, _, attention = name.partition("_")
    common = dict(vocab_size=VOCAB, attn_implementation=attention or "eager")
    if name == "gpt2":
        return tf.GPT2LMHeadModel(tf.GPT2Config(n_layer=LAYERS, n_embd=64, n_head=8, n_positions=SEQ, resid_pdrop=0.0,
                                                embd_pdrop=0.0, attn_pdrop=0.0, **common))
    llama_like = dict(num_hidden_layers=LAYERS, hidden_size=64, num_attention_heads=8, num_key_value_heads=2,
                      intermediate_size=128, max_position_embeddings=SEQ, **common)
    configs = {"llama": (tf.LlamaForCausalLM, tf.LlamaConfig), "qwen2": (tf.Qwen2ForCausalLM, tf.Qwen2Config),
               "mistral": (tf.MistralForCausalLM, tf.MistralConfig)}
    model_cls, config_cls = configs[name]
    return model_cls(config_cls(**llama_like))


def inputs() -> torch.Tensor:
    return torch.randint(0, VOCAB, (BATCH, SEQ), generator=torch.Generator().manual_seed(1))


def selected(grid: str, model: int, mesh: int, plan: int, models: int, meshes: int) -> bool:
    """Whether the case (model, mesh, plan kind), as indices, belongs to the grid: "full" (every
    case), "half" (each (model, plan kind) on one mesh, taken in turn) or "cover" (each (mesh, plan
    kind) with one model, the models shifted from mesh to mesh: every plan kind meets every mesh,
    every model meets every mesh, and the models take the plan kinds in turn)."""
    if grid == "half":
        return (model + plan) % meshes == mesh
    if grid == "cover":
        return model == (plan + mesh * (models // meshes)) % models
    return True


def solve_all(models: list, meshes: list, plans: list, grid: str, seeds: tuple = (7,)) -> list:
    """(model, mesh, plan kind, graph, schedule) for every case of the grid (selected), solved
    in this process; a random plan once per seed (its kind then `random:SEED`)."""
    import shardsynth

    cases = []
    for i, name in enumerate(models):
        graph = shardsynth.trace(build(name), (inputs(),))
        for k, mesh in enumerate(meshes):
            for j, kind in enumerate(plans):
                if not selected(grid, i, k, j, len(models), len(meshes)):
                    continue
                plan = "" if kind == "optimum" else kind
                for seed in (seeds if kind == "random" else seeds[:1]):
                    result = shardsynth.solve(graph, mesh=mesh, mode="training", plan=plan, seed=seed)
                    priced = shardsynth._native.collectives(graph, result["schedule"])["collectives"]
                    label = f"random:{seed}" if kind == "random" and len(seeds) > 1 else kind
                    cases.append((name, mesh, label, graph, result["schedule"], priced))
    return cases


def relative(a: torch.Tensor, b: torch.Tensor) -> float:
    a, b = a.detach(), b.detach()
    return float((a - b).abs().max() / b.abs().max().clamp_min(1e-12))


def loss_of(model: torch.nn.Module, ids: torch.Tensor) -> torch.Tensor:
    logits = model(ids, use_cache=False).logits
    return torch.nn.functional.cross_entropy(logits[:, :-1].flatten(0, 1), ids[:, 1:].flatten())


PHASES = ("forward", "backward", "optimizer")
# Every case must match the plan's collectives exactly, per phase, per kind, in count and
# bytes (BENCHMARKS.md has the table), after bias_in_partial_sum.


def counted_text(counted: dict) -> str:
    return ", ".join(f"{k} {n}/{b}" for k, (n, b) in counted.items()) or "none"


def run_case(name: str, mesh_text: str, kind: str, graph: dict, schedule: dict, priced: list) -> tuple:
    """('' when the sharded model matches the whole one and its collectives the plan's, else what
    differs; per phase of the first training step, (predicted, counted) per kind: (count, bytes))."""
    from torch.distributed.device_mesh import init_device_mesh

    import shardsynth
    from shardsynth.comm_count import CollectiveCounter, bias_in_partial_sum, predicted_by_kind

    ref = build(name).eval()
    model = copy.deepcopy(ref)
    shardsynth.trace(model, (inputs(),))  # the exported program parallelize runs op by op
    mesh = init_device_mesh("cpu", tuple(int(n) for n in mesh_text.split("x")))
    model = shardsynth.parallelize(model, schedule, mesh, graph=graph)
    ids = inputs()
    with torch.no_grad():
        logits = model(ids, use_cache=False).logits
        err = relative(logits, ref(ids, use_cache=False).logits)
    if err > LOGITS_RTOL:
        return f"logits differ by {err:.2e}", {}
    opt = torch.optim.AdamW(model.parameters(), lr=LR, eps=EPS)
    ref_opt = torch.optim.AdamW(ref.parameters(), lr=LR, eps=EPS)
    table: dict = {}
    for step in range(3):
        counters = {phase: CollectiveCounter() for phase in PHASES}
        opt.zero_grad()
        with counters["forward"]:
            loss = loss_of(model, ids)
        with counters["backward"]:
            loss.backward()
        with counters["optimizer"]:
            opt.step()
        ref_opt.zero_grad()
        ref_loss = loss_of(ref, ids)
        ref_loss.backward()
        ref_opt.step()
        if step == 0:
            unsent = bias_in_partial_sum(priced, graph, schedule)
            sent = [r for r in priced if r not in unsent]
            table = {phase: (predicted_by_kind(priced, phase), predicted_by_kind(sent, phase),
                             counters[phase].by_kind()) for phase in PHASES}
            table["other"] = sorted(set(sum((c.other for c in counters.values()), [])))
            table["unplanned_moves"] = list(getattr(model, "shardsynth_run").unplanned_moves)
        if abs(loss.item() - ref_loss.item()) > LOSS_RTOL * abs(ref_loss.item()):
            return f"step {step} loss {loss.item()} against {ref_loss.item()}", table
        if step == 0 and any(table[p][1] != table[p][2] for p in PHASES):
            return "the collectives counted differ from the plan's", table
    whole = dict(ref.named_parameters())
    for pname, p in model.named_parameters():
        err = float((p.full_tensor().detach() - whole[pname].detach()).abs().max())
        if err > PARAM_ATOL:
            return f"parameter {pname} differs by {err:.2e} after 3 steps", table
    return "", table


def rank_main(rank: int, world: int, port: int, package_dir: str, cases: list) -> None:
    sys.path.insert(0, package_dir)
    warnings.filterwarnings("ignore")  # CommDebugMode's module tracker on a model returning a ModelOutput
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.distributed.init_process_group("gloo", rank=rank, world_size=world)
    failed = 0
    for name, mesh, kind, graph, schedule, priced in cases:
        counts: dict = {}
        try:
            problem, counts = run_case(name, mesh, kind, graph, schedule, priced)
        except Exception as e:  # noqa: BLE001 - reported as the case's failure
            problem = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        failed += bool(problem)
        if rank == 0:
            print(f"{name} mesh {mesh} plan {kind}: {'ok' if not problem else 'FAILED: ' + problem}", flush=True)
            for phase in PHASES:
                if phase in counts:
                    priced_all, want, got = counts[phase]
                    unsent = "" if priced_all == want else f" (priced {counted_text(priced_all)}, as DTensor sends it: less the row-parallel biases)"
                    print(f"  {phase:9s} predicted {counted_text(want)}{unsent}; counted {counted_text(got)}"
                          f"{'' if want == got else '  MISMATCH'}", flush=True)
            if counts.get("other") or counts.get("unplanned_moves"):
                print(f"  other collectives {counts.get('other')}; unplanned moves {counts.get('unplanned_moves')}", flush=True)
    if rank == 0:
        print(f"{len(cases) - failed} passed, {failed} failed", flush=True)
    torch.distributed.destroy_process_group()
    if failed:
        sys.exit(1)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("package_dir")
    parser.add_argument("--models", default="gpt2,llama,qwen2,mistral")
    parser.add_argument("--meshes", default="8,2x4")
    parser.add_argument("--plans", default="optimum,megatron,fsdp,zero1,random")
    parser.add_argument("--grid", choices=["full", "half", "cover"], default="full",
                        help="which (model, mesh, plan kind) cases run (selected)")
    parser.add_argument("--seeds", default="7", help="the seeds of the random plans, one case each")
    args = parser.parse_args()
    sys.path.insert(0, args.package_dir)
    seeds = tuple(int(s) for s in args.seeds.split(","))
    cases = solve_all(args.models.split(","), args.meshes.split(","), args.plans.split(","), args.grid, seeds)
    try:
        torch.multiprocessing.spawn(rank_main, args=(8, free_port(), args.package_dir, cases), nprocs=8)
    except torch.multiprocessing.ProcessExitedException:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
