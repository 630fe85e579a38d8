"""LlamaForCausalLM at llama-3-8b's config on the meta device: build, trace, solve (BENCHMARKS.md, "PyTorch").

    .venv/bin/python bench/torch_llama8b.py build/python build/synth/synth

Prints the wall time of each part and the optimum of the traced graph beside
`synth llama --preset llama-3-8b` (mesh 8, training, 80 GB), both solved by
the same build."""
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, sys.argv[1])
import torch  # noqa: E402
import transformers as tf  # noqa: E402

import shardsynth  # noqa: E402

SYNTH = sys.argv[2]
start = time.perf_counter()
config = tf.LlamaConfig(num_hidden_layers=32, hidden_size=4096, num_attention_heads=32, num_key_value_heads=8,
                        intermediate_size=14336, vocab_size=128256, max_position_embeddings=8192,
                        rope_theta=500000.0, tie_word_embeddings=False, attn_implementation="sdpa")
with torch.device("meta"):
    model = tf.LlamaForCausalLM(config)
built = time.perf_counter()
graph = shardsynth.trace(model, (torch.zeros(8, 1024, dtype=torch.int64, device="meta"),))
traced = time.perf_counter()
result = shardsynth.solve(graph, mesh="8", mode="training", memory=80_000_000_000)
solved = time.perf_counter()
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "plan.json")
    t0 = time.perf_counter()
    subprocess.run([SYNTH, "llama", "--preset", "llama-3-8b", "--mesh", "8", "--mode", "training", "--memory",
                    "80000000000", "--quiet", "--schedule", path], check=True, stdout=subprocess.DEVNULL)
    builtin_s = time.perf_counter() - t0
    with open(path) as f:
        builtin = json.load(f)["cost"]
print(f"build on meta {built - start:.1f} s, trace {traced - built:.1f} s ({len(graph['nodes'])} nodes), "
      f"solve {solved - traced:.1f} s: cost {result['cost']} ns, proven optimal {result['proven_optimal']}")
print(f"synth llama --preset llama-3-8b: {builtin_s:.1f} s, cost {builtin} ns; equal: {builtin == result['cost']}")
