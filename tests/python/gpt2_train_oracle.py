"""An independent oracle for `shard-run --train` on GPT-2: plain PyTorch.

The model here is written from Hugging Face's GPT2LMHeadModel semantics
(learned positions, pre-LayerNorm blocks, Conv1D weights stored [in, out],
the tanh GELU, a causal mask at the dtype's lowest value, lm_head tied to
wte, dropout off) with torch.autograd and torch.optim.Adam. It shares no code
with the project or with examples/torch_gpt2.py.

  init  DIR --layers L --embd E --heads H --seq T --batch B --vocab V --seed S
        writes DIR/params.safetensors (every parameter by the project's full
        names) and DIR/input.safetensors (input_ids and labels, int64:
        windows of a token stream and their next tokens).
  train DIR ... --steps N --lr LR [--trained FILE]
        trains N Adam steps from those files, prints one JSON line
        {"losses": [...]}, and with --trained compares every parameter of
        FILE (shard-run --output) with its own: prints {"max_rel": x,
        "worst": name, "within": ok} and exits 1 unless every element is
        within --tolerance of the tensor's largest magnitude plus 0.1 * lr
        per step (Adam's noise allowance, see train()).
"""
import argparse
import json
import math
import struct
import sys

import torch
import torch.nn.functional as F

N_POSITIONS = 1024
DTYPES = {"F32": (torch.float32, 4), "I64": (torch.int64, 8)}


def write_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        t = tensors[name].contiguous()
        code = "I64" if t.dtype == torch.int64 else "F32"
        data = t.to(DTYPES[code][0]).numpy().tobytes()
        header[name] = {"dtype": code, "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)


def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    (size,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + size])
    body = raw[8 + size:]
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype, width = DTYPES[info["dtype"]]
        begin, end = info["data_offsets"]
        count = (end - begin) // width
        values = torch.frombuffer(bytearray(body[begin:end]), dtype=dtype, count=count)
        out[name] = values.reshape(info["shape"]).clone()
    return out


def shapes(a):
    e, v = a.embd, a.vocab
    out = {"wte.weight": [v, e], "wpe.weight": [N_POSITIONS, e], "ln_f.weight": [e], "ln_f.bias": [e]}
    for layer in range(a.layers):
        p = f"h.{layer}."
        out.update({
            p + "ln_1.weight": [e], p + "ln_1.bias": [e],
            p + "attn.c_attn.weight": [e, 3 * e], p + "attn.c_attn.bias": [3 * e],
            p + "attn.c_proj.weight": [e, e], p + "attn.c_proj.bias": [e],
            p + "ln_2.weight": [e], p + "ln_2.bias": [e],
            p + "mlp.c_fc.weight": [e, 4 * e], p + "mlp.c_fc.bias": [4 * e],
            p + "mlp.c_proj.weight": [4 * e, e], p + "mlp.c_proj.bias": [e],
        })
    return out


def new_gelu(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def loss_of(w, ids, labels, a):
    b, t = ids.shape
    e, h = a.embd, a.heads
    d = e // h
    x = w["wte.weight"][ids] + w["wpe.weight"][torch.arange(t)].unsqueeze(0)
    causal = torch.tril(torch.ones(t, t, dtype=torch.bool))
    for layer in range(a.layers):
        p = f"h.{layer}."
        y = F.layer_norm(x, (e,), w[p + "ln_1.weight"], w[p + "ln_1.bias"], 1e-5)
        q, k, v = (y @ w[p + "attn.c_attn.weight"] + w[p + "attn.c_attn.bias"]).split(e, dim=-1)
        q, k, v = (z.reshape(b, t, h, d).transpose(1, 2) for z in (q, k, v))
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(d)
        scores = torch.where(causal, scores, torch.tensor(torch.finfo(scores.dtype).min))
        attended = (scores.softmax(dim=-1) @ v).transpose(1, 2).reshape(b, t, e)
        x = x + attended @ w[p + "attn.c_proj.weight"] + w[p + "attn.c_proj.bias"]
        y = F.layer_norm(x, (e,), w[p + "ln_2.weight"], w[p + "ln_2.bias"], 1e-5)
        hidden = new_gelu(y @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"])
        x = x + hidden @ w[p + "mlp.c_proj.weight"] + w[p + "mlp.c_proj.bias"]
    x = F.layer_norm(x, (e,), w["ln_f.weight"], w["ln_f.bias"], 1e-5)
    logits = x @ w["wte.weight"].t()
    # The loss head of shard-run's training graph: every position scores its
    # label (the next token of the stream), averaged over all of them.
    return F.cross_entropy(logits.reshape(-1, a.vocab), labels.reshape(-1))


def init(a):
    g = torch.Generator().manual_seed(a.seed)
    params = {}
    for name, shape in shapes(a).items():
        if name.endswith(("ln_1.weight", "ln_2.weight", "ln_f.weight")):
            params[name] = 1.0 + 0.1 * torch.randn(shape, generator=g)
        else:
            params[name] = 0.05 * torch.randn(shape, generator=g)
    write_safetensors(f"{a.dir}/params.safetensors", params)
    # A data loader's windows of a token stream: seq + 1 tokens each, the
    # first seq the input ids, the last seq their next tokens, the labels.
    stream = torch.randint(a.vocab, (a.batch, a.seq + 1), generator=g)
    write_safetensors(f"{a.dir}/input.safetensors", {"input_ids": stream[:, :-1], "labels": stream[:, 1:]})


def train(a):
    w = {k: v.requires_grad_(True) for k, v in read_safetensors(f"{a.dir}/params.safetensors").items()}
    inputs = read_safetensors(f"{a.dir}/input.safetensors")
    ids, labels = inputs["input_ids"], inputs["labels"]
    opt = torch.optim.Adam(list(w.values()), lr=a.lr)
    losses = []
    for _ in range(a.steps):
        opt.zero_grad()
        loss = loss_of(w, ids, labels, a)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    print(json.dumps({"losses": losses}))
    if not a.trained:
        return 0
    got = read_safetensors(a.trained)
    # Adam turns a gradient that is zero in exact arithmetic (the key bias:
    # softmax ignores a shift shared by every key) into lr * g / (|g| + eps)
    # of fp32 noise g, which differs by a fraction of lr between summation
    # orders: each element may also be off by 0.1 * lr per step.
    slack = 0.1 * a.lr * a.steps
    worst, worst_name, ok = 0.0, "", True
    for name, want in w.items():
        if name not in got:
            print(json.dumps({"missing": name}))
            return 1
        want = want.detach()
        error = (got[name] - want).abs()
        scale = want.abs().max()
        rel = (error.max() / scale).item()
        ok = ok and bool((error <= a.tolerance * scale + slack).all())
        if rel >= worst:
            worst, worst_name = rel, name
    print(json.dumps({"max_rel": worst, "worst": worst_name, "within": ok}))
    return 0 if ok else 1


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=["init", "train"])
    parser.add_argument("dir")
    for flag in ("layers", "embd", "heads", "seq", "batch", "vocab", "seed", "steps"):
        parser.add_argument("--" + flag, type=int, default=0 if flag != "steps" else 1)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--trained", default="")
    parser.add_argument("--tolerance", type=float, default=1e-4)
    a = parser.parse_args()
    torch.set_num_threads(1)
    if a.command == "init":
        init(a)
        return 0
    return train(a)


if __name__ == "__main__":
    sys.exit(main())
