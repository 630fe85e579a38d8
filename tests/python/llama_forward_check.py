#!/usr/bin/env python3
"""A plain-PyTorch Llama forward checked against `shard-run --output` on 8 ranks.

Random weights under Hugging Face LlamaForCausalLM names go to a safetensors
file; `synth llama` plans the model (Megatron and the synthesized optimum) on
a 2x4 mesh and an 8-device mesh; `shard-run --params --input --output` runs
each plan on 8 MPI ranks; the logits must match this file's own forward,
written from the Hugging Face modeling code's equations (not from
examples/torch_llama.py), within 1e-4 relative to the largest logit.

    llama_forward_check.py SYNTH SHARD_RUN MPIEXEC
"""
import json
import math
import os
import struct
import subprocess
import sys
import tempfile

import torch

# Small enough for CPU ranks, with grouped-query attention (2 KV heads for 4
# query heads, fewer than the 4- and 8-way tensor parallelism) and an untied head.
LAYERS, HIDDEN, HEADS, KV_HEADS, FFN, VOCAB, SEQ, BATCH = 2, 64, 4, 2, 96, 256, 16, 2
THETA, EPS = 500000.0, 1e-5
MODEL = (f"llama --layers {LAYERS} --hidden {HIDDEN} --heads {HEADS} --kv-heads {KV_HEADS} --ffn {FFN} "
         f"--vocab {VOCAB} --seq {SEQ} --batch {BATCH}").split()


def write_safetensors(path, tensors):
    """The safetensors layout: an 8-byte little-endian header size, the JSON header, the raw data."""
    header, blobs, offset = {}, [], 0
    for name, (t, dtype) in tensors.items():
        data = t.contiguous().numpy().tobytes()
        header[name] = {"dtype": dtype, "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    size = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + size])
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        assert info["dtype"] == "F32", info
        out[name] = torch.frombuffer(bytearray(raw[8 + size + begin:8 + size + end]), dtype=torch.float32).reshape(
            info["shape"])
    return out


def random_weights(generator):
    """Every parameter by its Hugging Face name, nn.Linear weights [out, in]."""
    head_dim = HIDDEN // HEADS
    w = {"model.embed_tokens.weight": torch.randn(VOCAB, HIDDEN, generator=generator) * 0.5,
         "model.norm.weight": 1 + 0.1 * torch.randn(HIDDEN, generator=generator),
         "lm_head.weight": torch.randn(VOCAB, HIDDEN, generator=generator) * 0.1}
    shapes = {"self_attn.q_proj": (HEADS * head_dim, HIDDEN), "self_attn.k_proj": (KV_HEADS * head_dim, HIDDEN),
              "self_attn.v_proj": (KV_HEADS * head_dim, HIDDEN), "self_attn.o_proj": (HIDDEN, HEADS * head_dim),
              "mlp.gate_proj": (FFN, HIDDEN), "mlp.up_proj": (FFN, HIDDEN), "mlp.down_proj": (HIDDEN, FFN)}
    for layer in range(LAYERS):
        p = f"model.layers.{layer}."
        for norm in ("input_layernorm", "post_attention_layernorm"):
            w[p + norm + ".weight"] = 1 + 0.1 * torch.randn(HIDDEN, generator=generator)
        for name, shape in shapes.items():
            w[p + name + ".weight"] = torch.randn(*shape, generator=generator) / math.sqrt(shape[1])
    return w


def forward(w, ids):
    """LlamaForCausalLM's eval forward, eager attention, in float64."""
    w = {k: v.double() for k, v in w.items()}
    head_dim, rep = HIDDEN // HEADS, HEADS // KV_HEADS

    def rms(x, weight):
        return weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS))

    inv_freq = 1.0 / (THETA ** (torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim))
    angles = torch.outer(torch.arange(SEQ, dtype=torch.float64), inv_freq)
    cos, sin = torch.cat((angles, angles), -1).cos(), torch.cat((angles, angles), -1).sin()

    def rope(x):
        half = head_dim // 2
        return x * cos + torch.cat((-x[..., half:], x[..., :half]), -1) * sin

    x = w["model.embed_tokens.weight"][ids]
    mask = torch.full((SEQ, SEQ), float("-inf"), dtype=torch.float64).triu(1)
    for layer in range(LAYERS):
        p = f"model.layers.{layer}."
        h = rms(x, w[p + "input_layernorm.weight"])
        q = (h @ w[p + "self_attn.q_proj.weight"].T).view(BATCH, SEQ, HEADS, head_dim).transpose(1, 2)
        k = (h @ w[p + "self_attn.k_proj.weight"].T).view(BATCH, SEQ, KV_HEADS, head_dim).transpose(1, 2)
        v = (h @ w[p + "self_attn.v_proj.weight"].T).view(BATCH, SEQ, KV_HEADS, head_dim).transpose(1, 2)
        q, k = rope(q), rope(k)
        k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
        probs = torch.softmax(q @ k.transpose(2, 3) / math.sqrt(head_dim) + mask, dim=-1)
        context = (probs @ v).transpose(1, 2).reshape(BATCH, SEQ, HIDDEN)
        x = x + context @ w[p + "self_attn.o_proj.weight"].T
        h = rms(x, w[p + "post_attention_layernorm.weight"])
        gated = torch.nn.functional.silu(h @ w[p + "mlp.gate_proj.weight"].T) * (h @ w[p + "mlp.up_proj.weight"].T)
        x = x + gated @ w[p + "mlp.down_proj.weight"].T
    return rms(x, w["model.norm.weight"]) @ w["lm_head.weight"].T


def main(synth, shard_run, mpiexec):
    generator = torch.Generator().manual_seed(16)
    weights = random_weights(generator)
    ids = torch.randint(0, VOCAB, (BATCH, SEQ), generator=generator)
    expected = forward(weights, ids)
    failures = 0
    with tempfile.TemporaryDirectory(prefix="llama_forward_") as tmp:
        params = os.path.join(tmp, "model.safetensors")
        write_safetensors(params, {name: (t, "F32") for name, t in weights.items()})
        inputs = os.path.join(tmp, "input.safetensors")
        write_safetensors(inputs, {"input_ids": (ids.to(torch.int64), "I64")})
        for mesh, plan in (("2x4", ["--plan", "megatron"]), ("8", [])):
            schedule, output = os.path.join(tmp, "plan.json"), os.path.join(tmp, "logits.safetensors")
            subprocess.run([synth, "--quiet", "--mesh", mesh, *plan, "--schedule", schedule,
                            *MODEL], check=True, stdout=subprocess.DEVNULL)
            run = subprocess.run(["timeout", "120", mpiexec, "--allow-run-as-root", "--oversubscribe", "-np", "8",
                                  shard_run, "--check", "--schedule", schedule, "--params", params, "--input", inputs,
                                  "--output", output, *MODEL], capture_output=True, text=True)
            if run.returncode != 0 or "MISMATCH" in run.stdout:
                print(f"mesh {mesh} {plan}: shard-run failed\n{run.stdout}\n{run.stderr}")
                failures += 1
                continue
            got = read_safetensors(output)["output"].double()
            error = (got - expected).abs().max().item() / expected.abs().max().item()
            print(f"mesh {mesh} {' '.join(plan) or 'synthesized'}: max error {error:.2e} of the largest logit")
            failures += error > 1e-4
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
