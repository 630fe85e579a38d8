"""shardsynth.trace on Hugging Face `transformers` models as the library
defines them (built from their config: random weights, no download), run by
ctest with the project's .venv: python trace_test.py PACKAGE_DIR SYNTH_BINARY.

Goldens: a traced GPT2LMHeadModel / LlamaForCausalLM has the same optimum as
`synth gpt2` / `synth llama` at equal sizes, with eager and with SDPA
attention; in training the model is given its labels (`shift_labels`, as a
data loader hands them), so it ends in its loss as synth's training graphs
do; also the bad inputs, each one line."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import unittest

import torch

PACKAGE_DIR = sys.argv[1]
SYNTH = sys.argv[2]
sys.path.insert(0, PACKAGE_DIR)
import shardsynth  # noqa: E402
import transformers as tf  # noqa: E402

GPT2 = dict(layers=2, embd=64, heads=4, seq=16, vocab=256, batch=8)
LLAMA = dict(layers=2, hidden=64, heads=4, kv_heads=2, ffn=96, vocab=256, seq=16, batch=8)


def gpt2(attn: str) -> torch.nn.Module:
    c = GPT2
    return tf.GPT2LMHeadModel(tf.GPT2Config(n_layer=c["layers"], n_embd=c["embd"], n_head=c["heads"],
                                            vocab_size=c["vocab"], n_positions=1024, attn_implementation=attn))


def llama_config(attn: str, **sizes: int) -> dict:
    c = dict(LLAMA, **sizes)
    return dict(num_hidden_layers=c["layers"], hidden_size=c["hidden"], num_attention_heads=c["heads"],
                num_key_value_heads=c["kv_heads"], intermediate_size=c["ffn"], vocab_size=c["vocab"],
                max_position_embeddings=8192, rope_theta=500000.0, tie_word_embeddings=False,
                attn_implementation=attn)


def ids(batch: int, seq: int, device: str = "cpu") -> torch.Tensor:
    return torch.zeros(batch, seq, dtype=torch.int64, device=device)


def labelled(batch: int, seq: int, device: str = "cpu") -> dict:
    """The keyword arguments of a training forward: Hugging Face computes the
    cross-entropy inside forward against `shift_labels` (the next token of
    every position; `labels` only switches the loss on)."""
    return {"labels": ids(batch, seq, device), "shift_labels": ids(batch, seq, device)}


def synth_cost(*args: str) -> int:
    """The cost `synth` writes in its schedule for these arguments."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "plan.json")
        subprocess.run([SYNTH, *args, "--quiet", "--schedule", path], check=True, stdout=subprocess.DEVNULL)
        with open(path) as f:
            return json.load(f)["cost"]


SETTINGS = (("8", "inference"), ("8", "training"), ("2x4", "training"))


class GoldenTest(unittest.TestCase):
    def check(self, model: torch.nn.Module, sizes: dict, builtin: list) -> None:
        """Traced in inference (the logits) and in training (given labels: the
        loss), against synth's inference and training graphs."""
        inputs = (ids(sizes["batch"], sizes["seq"]),)
        graphs = {"inference": shardsynth.trace(model, inputs),
                  "training": shardsynth.trace(model, inputs, labelled(sizes["batch"], sizes["seq"]))}
        self.assertEqual(graphs["training"]["nodes"][-2]["kind"], "cross_entropy")
        for mesh, mode in SETTINGS:
            with self.subTest(mesh=mesh, mode=mode):
                want = synth_cost(*builtin, "--mesh", mesh, "--mode", mode)
                self.assertEqual(shardsynth.solve(graphs[mode], mesh=mesh, mode=mode)["cost"], want)

    def test_gpt2_SameOptimumAsSynthGpt2(self):
        builtin = ["gpt2", *[f"--{k}={v}" for k, v in GPT2.items()]]
        for attn in ("eager", "sdpa"):
            with self.subTest(attn=attn):
                self.check(gpt2(attn), GPT2, builtin)

    def test_llama_GroupedQueryAttentionSameOptimumAsSynthLlama(self):
        builtin = ["llama", "--untied", *[f"--{k.replace('_', '-')}={v}" for k, v in LLAMA.items()]]
        for attn in ("eager", "sdpa"):
            with self.subTest(attn=attn):
                self.check(tf.LlamaForCausalLM(tf.LlamaConfig(**llama_config(attn))), LLAMA, builtin)

    def test_llama_MetaDeviceAtLlama3_8bWidths(self):
        sizes = dict(layers=2, hidden=4096, heads=32, kv_heads=8, ffn=14336, vocab=128256, seq=1024)
        with torch.device("meta"):
            model = tf.LlamaForCausalLM(tf.LlamaConfig(**llama_config("sdpa", **sizes)))
        graph = shardsynth.trace(model, (ids(8, 1024, "meta"),), labelled(8, 1024, "meta"))
        want = synth_cost("llama", "--preset", "llama-3-8b", "--layers", "2", "--mesh", "8", "--mode", "training",
                          "--memory", "80000000000")
        self.assertEqual(shardsynth.solve(graph, mesh="8", mode="training", memory=80_000_000_000)["cost"], want)

    def test_qwen2AndMistral_TraceAndSolve(self):
        for cls, config in ((tf.Qwen2ForCausalLM, tf.Qwen2Config), (tf.MistralForCausalLM, tf.MistralConfig)):
            with self.subTest(model=cls.__name__):
                graph = shardsynth.trace(cls(config(**llama_config("sdpa"))), (ids(8, 16),))
                kinds = {n["kind"] for n in graph["nodes"]}
                self.assertTrue({"rotary", "repeat_kv", "rms_norm", "silu"} <= kinds, kinds)
                self.assertTrue(shardsynth.solve(graph, mesh="2x4")["proven_optimal"])

    def test_names_ParametersKeepTheirModuleNames(self):
        model = gpt2("eager")
        graph = shardsynth.trace(model, (ids(2, 8),))
        names = {f"{n['name']}.{p['name']}": p.get("tied_to") for n in graph["nodes"] for p in n.get("params", [])}
        self.assertEqual(names["lm_head.weight"], "transformer.wte.weight")
        untied = {k for k, v in names.items() if v is None}
        self.assertEqual(untied, {name for name, _ in model.named_parameters()})


class Sine(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sin(self.fc(x))


class BadInputTest(unittest.TestCase):
    def test_unknownOp_OneLineNamingTheOpAndTheSourceLine(self):
        with self.assertRaises(shardsynth.TraceError) as caught:
            shardsynth.trace(Sine(), (torch.zeros(2, 8),))
        message = str(caught.exception)
        self.assertEqual(len(message.splitlines()), 1)
        self.assertIn("aten.sin", message)
        self.assertIn("trace_test.py:", message)

    def test_unknownOp_KeptForReplication(self):
        graph = shardsynth.trace(Sine(), (torch.zeros(2, 8),), unknown_ops="keep")
        self.assertIn("sin", {n["kind"] for n in graph["nodes"]})
        with self.assertRaises(ValueError):
            shardsynth.solve(graph, mesh="8")
        self.assertTrue(shardsynth.solve(graph, mesh="8", unknown_ops="replicate")["proven_optimal"])

    def test_torchMissing_OneLine(self):
        # An interpreter without torch (sys.modules["torch"] = None makes `import torch` fail as
        # if it were not installed): the package still imports, and trace names what is missing.
        code = ("import sys; sys.modules['torch'] = None; sys.path.insert(0, sys.argv[1]); import shardsynth\n"
                "print(shardsynth.solve(shardsynth.builtin_graph('mlp'), cost_model='slapo')['cost'])\n"
                "try:\n    shardsynth.trace\nexcept ModuleNotFoundError as e:\n    print(e)")
        out = subprocess.run([sys.executable, "-c", code, PACKAGE_DIR], capture_output=True, text=True, check=True)
        lines = out.stdout.strip().splitlines()
        self.assertEqual(lines[0], "131072")
        self.assertEqual(len(lines), 2)
        self.assertIn("shardsynth.trace needs torch", lines[1])


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
