"""A transformers model from its config, traced, solved, parallelized with DTensor and trained 3 steps.
PYTHONPATH=build/python .venv/bin/torchrun --nproc-per-node 8 examples/hf_train.py   (8 CPU ranks, gloo)"""
import torch, torch.distributed as dist, transformers as tf
from torch.distributed.device_mesh import init_device_mesh
import shardsynth

dist.init_process_group("gloo")
torch.manual_seed(0)  # the same weights on every rank
config = tf.LlamaConfig(num_hidden_layers=2, hidden_size=64, num_attention_heads=8, num_key_value_heads=2,
                        intermediate_size=128, vocab_size=128, use_cache=False, attn_implementation="eager")
model, ids = tf.LlamaForCausalLM(config), torch.randint(0, 128, (8, 16))
plan = shardsynth.solve(shardsynth.trace(model, (ids,)), mesh="8", mode="training")  # same plan on every rank
model = shardsynth.parallelize(model, plan, init_device_mesh("cpu", (8,)))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(3):
    loss = torch.nn.functional.cross_entropy(model(ids).logits[:, :-1].flatten(0, 1), ids[:, 1:].flatten())
    loss.backward(), opt.step(), opt.zero_grad()
    if dist.get_rank() == 0:
        print(f"step {step}: loss {loss.item():.4f}  (plan cost {plan['cost']} ns, proven optimal: {plan['proven_optimal']})")
dist.destroy_process_group()
