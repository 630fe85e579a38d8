"""to_tp_plan, parallelize_script and parallelize's bad inputs, in one process
on torch's fake process group (world size 8: placements without traffic).
Run by ctest with the project's .venv: python tp_plan_test.py PACKAGE_DIR.

Hugging Face's own base_model_tp_plan for Llama, applied with
parallelize_module, gives the same placements as `--plan megatron` applied
with shardsynth.parallelize."""
from __future__ import annotations

import copy
import sys
import unittest

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module
from torch.testing._internal.distributed.fake_pg import FakeStore

PACKAGE_DIR = sys.argv[1]
sys.path.insert(0, PACKAGE_DIR)
import shardsynth  # noqa: E402
import transformers as tf  # noqa: E402

CONFIG = dict(num_hidden_layers=2, hidden_size=64, num_attention_heads=8, num_key_value_heads=2,
              intermediate_size=128, vocab_size=128, max_position_embeddings=16, attn_implementation="eager")


def llama() -> torch.nn.Module:
    torch.manual_seed(0)
    return tf.LlamaForCausalLM(tf.LlamaConfig(**CONFIG))


def gpt2() -> torch.nn.Module:
    torch.manual_seed(0)
    return tf.GPT2LMHeadModel(tf.GPT2Config(n_layer=2, n_embd=64, n_head=8, vocab_size=128, n_positions=16))


def placements_of(model: torch.nn.Module) -> dict:
    return {name: tuple(getattr(p, "placements", ())) for name, p in model.named_parameters()}


class Plans:
    """Traced graphs and solved schedules, shared by the tests."""

    ids = torch.zeros(8, 16, dtype=torch.int64)
    graph = shardsynth.trace(llama(), (ids,))
    gpt2_graph = shardsynth.trace(gpt2(), (ids,))
    megatron = shardsynth.solve(graph, mesh="8", mode="training", plan="megatron")
    fsdp = shardsynth.solve(graph, mesh="8", mode="training", plan="fsdp")
    megatron_2x4 = shardsynth.solve(graph, mesh="2x4", mode="training", plan="megatron")
    gpt2_megatron = shardsynth.solve(gpt2_graph, mesh="8", mode="training", plan="megatron")


class TpPlanTest(unittest.TestCase):
    def test_megatron_HuggingFaceVocabularyForTheLayers(self):
        plan = shardsynth.to_tp_plan(_layers_only(Plans.megatron), Plans.graph)
        base = tf.LlamaConfig.base_model_tp_plan
        self.assertEqual(plan, {f"model.{k}": v for k, v in base.items()})

    def test_embeddingSharded_ErrorNamesTheTensor(self):
        with self.assertRaises(shardsynth.PlanError) as caught:
            shardsynth.to_tp_plan(Plans.megatron, Plans.graph)
        self.assertIn("model.embed_tokens.weight", str(caught.exception))

    def test_fsdp_ErrorNamesTheStoredCopy(self):
        with self.assertRaises(shardsynth.PlanError) as caught:
            shardsynth.to_tp_plan(Plans.fsdp, Plans.graph)
        self.assertIn(":stored", str(caught.exception))

    def test_twoDimensionalMesh_Error(self):
        with self.assertRaises(shardsynth.PlanError) as caught:
            shardsynth.to_tp_plan(Plans.megatron_2x4, Plans.graph)
        self.assertIn("1-D mesh", str(caught.exception))


def _layers_only(result: dict) -> dict:
    """The megatron plan with the embedding and head replicated (what base_model_tp_plan covers)."""
    schedule = copy.deepcopy(result["schedule"])
    for entry in schedule["specs"]:
        if entry["tensor"].startswith(("model.embed_tokens", "lm_head")):
            entry["spec"] = "".join("R" for c in entry["spec"].split("+")[0] if c in "RS")
    return schedule


class DTensorTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.mesh = init_device_mesh("cpu", (8,))

    def test_huggingFaceBasePlan_SamePlacementsAsMegatron(self):
        ours = shardsynth.parallelize(llama(), Plans.megatron, self.mesh, graph=Plans.graph)
        theirs = llama()
        styles = {"colwise": ColwiseParallel, "rowwise": RowwiseParallel}
        parallelize_module(theirs, self.mesh, {f"model.{k}": styles[v]() for k, v in
                                               tf.LlamaConfig.base_model_tp_plan.items()})
        want = {n: p for n, p in placements_of(theirs).items() if p}
        got = placements_of(ours)
        self.assertTrue(want)
        for name, placement in want.items():
            self.assertEqual(got[name], placement, name)

    def test_script_SamePlacementsAsParallelize(self):
        for result, graph, build in ((Plans.megatron, Plans.graph, llama), (Plans.fsdp, Plans.graph, llama),
                                     (Plans.gpt2_megatron, Plans.gpt2_graph, gpt2)):
            text = shardsynth.parallelize_script(result, graph)
            scope: dict = {}
            exec(compile(text, "plan_script.py", "exec"), scope)
            scripted = scope["apply"](build(), self.mesh)
            ours = shardsynth.parallelize(build(), result, self.mesh, graph=graph)
            self.assertEqual(placements_of(scripted), placements_of(ours), text)
        layers = shardsynth.parallelize_script(_layers_only(Plans.megatron), Plans.graph)
        self.assertIn('"model.layers.0.self_attn.q_proj": ColwiseParallel(),', layers)
        self.assertIn('"model.layers.1.mlp.down_proj": RowwiseParallel(),', layers)
        self.assertIn('place(model, "model.embed_tokens.weight", mesh, [Replicate()])', layers)

    def test_meshOfOtherShape_OneLineNothingApplied(self):
        model = llama()
        with self.assertRaises(shardsynth.PlanError) as caught:
            shardsynth.parallelize(model, Plans.megatron_2x4, self.mesh)
        self.assertEqual(str(caught.exception), "mesh 8 does not match the plan's mesh 2x4")
        self.assertFalse(any(placements_of(model).values()))

    def test_planForAnotherGraph_OneLineNothingApplied(self):
        model = llama()
        with self.assertRaises(shardsynth.PlanError) as caught:
            shardsynth.parallelize(model, Plans.gpt2_megatron, self.mesh)
        self.assertIn("plan for another graph: the model's parameter 'model.embed_tokens.weight'",
                      str(caught.exception))
        self.assertEqual(len(str(caught.exception).splitlines()), 1)
        self.assertFalse(any(placements_of(model).values()))

    def test_notASchedule_OneLine(self):
        with self.assertRaises(shardsynth.PlanError) as caught:
            shardsynth.parallelize(llama(), {"cost": 3}, self.mesh)
        self.assertIn("not a shardsynth schedule", str(caught.exception))


if __name__ == "__main__":
    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=8)
    unittest.main(argv=[sys.argv[0], "-v"])
