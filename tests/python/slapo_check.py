"""A shardsynth plan replayed onto the real Slapo (slapo.create_schedule, then
slapo.build) on 8 gloo ranks, against the unsharded model.

    python slapo_check.py PACKAGE_DIR SLAPO_DIR

SLAPO_DIR holds Slapo 0.0.3 (requirements-slapo.txt; scripts/bootstrap puts
it in .venv-slapo/). The MLP (fc1, gelu, fc2) runs its slapo-model optimum
and its Megatron plan; GPT-2's Megatron plan is checked to stop at the fused
q|k|v projection, whose blocked shard Slapo's `.shard` cannot say. One line
per case, then "N passed, M failed"."""
from __future__ import annotations

import copy
import os
import socket
import sys

import torch

HIDDEN, FFN, BATCH, SEQ = 64, 256, 8, 16


def import_slapo(slapo_dir: str):
    """Slapo 0.0.3 imports transformers.modeling_utils.Conv1D, which transformers 5 moved."""
    sys.path.insert(0, slapo_dir)
    import transformers.modeling_utils as modeling_utils
    import transformers.pytorch_utils as pytorch_utils

    if not hasattr(modeling_utils, "Conv1D"):
        modeling_utils.Conv1D = pytorch_utils.Conv1D
    import slapo

    return slapo


class Mlp(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(HIDDEN, FFN)
        self.fc2 = torch.nn.Linear(FFN, HIDDEN)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.nn.functional.gelu(self.fc1(x)))


def mlp() -> Mlp:
    torch.manual_seed(0)
    return Mlp()


def x() -> torch.Tensor:
    return torch.randn(BATCH, SEQ, HIDDEN, generator=torch.Generator().manual_seed(1))


def rank_main(rank: int, port: int, package_dir: str, slapo_dir: str, cases: list) -> None:
    sys.path.insert(0, package_dir)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.distributed.init_process_group("gloo", rank=rank, world_size=8)
    slapo = import_slapo(slapo_dir)
    from shardsynth.slapo_replay import replay_on_slapo

    failed = 0
    for kind, graph, schedule in cases:
        try:
            ref = mlp()
            sch = slapo.create_schedule(copy.deepcopy(ref))
            calls = replay_on_slapo(schedule, sch, graph)
            model, _ = slapo.build(sch, init_weights=False)
            with torch.no_grad():
                got, want = model(x()), ref(x())
            err = float((got - want).abs().max() / want.abs().max())
            problem = "" if err <= 1e-5 else f"output differs by {err:.2e}"
        except Exception as e:  # noqa: BLE001 - reported as the case's failure
            problem, calls = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}", []
        failed += bool(problem)
        if rank == 0:
            print(f"mlp plan {kind}: {'ok' if not problem else 'FAILED: ' + problem} ({'; '.join(calls)})", flush=True)
    torch.distributed.destroy_process_group()
    if failed:
        sys.exit(1)


def gpt2_stops_at_fused_qkv() -> str:
    """'' when replaying GPT-2's Megatron plan stops, as it must, at the blocked c_attn shard."""
    import transformers as tf

    import shardsynth
    from shardsynth.slapo_replay import replay_on_slapo

    model = tf.GPT2LMHeadModel(tf.GPT2Config(n_layer=1, n_embd=64, n_head=8, vocab_size=128, n_positions=16))
    graph = shardsynth.trace(model, (torch.zeros(8, 16, dtype=torch.int64),))
    plan = shardsynth.solve(graph, mesh="8", plan="megatron")

    class Recorder(dict):
        def __missing__(self, key):  # any node: a stand-in that accepts every call
            return type("Node", (), {"shard": lambda *a, **k: None, "sync": lambda *a, **k: None})()

    try:
        replay_on_slapo(plan, Recorder(), graph)
    except shardsynth.PlanError as e:
        return "" if "transformer.h.0.attn.c_attn.weight: a blocked shard" in str(e) else f"other error: {e}"
    return "the replay went through"


def main() -> int:
    package_dir, slapo_dir = sys.argv[1], sys.argv[2]
    sys.path.insert(0, package_dir)
    import shardsynth

    graph = shardsynth.trace(mlp(), (x(),))
    cases = [(kind, graph, shardsynth.solve(graph, mesh="8", cost_model="slapo", plan=plan))
             for kind, plan in (("optimum", ""), ("megatron", "megatron"))]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    failed = 0
    try:
        torch.multiprocessing.spawn(rank_main, args=(port, package_dir, slapo_dir, cases), nprocs=8)
    except torch.multiprocessing.ProcessExitedException:
        failed = 1
    problem = gpt2_stops_at_fused_qkv()
    print(f"gpt2 plan megatron: {'stops at the fused q|k|v shard, as expected' if not problem else 'FAILED: ' + problem}")
    failed += bool(problem)
    print(f"{3 - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
