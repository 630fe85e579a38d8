"""PyTorch reference gradients for tests/runtime/backward_torch_test.cpp.

Usage: backward_torch.py IN.safetensors OUT.safetensors

IN holds, per op, its operands and the output gradient as F32 tensors named
"<op>.<operand>" (linear.x, linear.weight, linear.bias, linear.dy, ...). OUT
gets torch's gradients, computed in float64 with autograd, named
"<op>.d<operand>". The safetensors files are read and written here with the
standard library and torch alone (Debian has no python3-safetensors).
"""
import json
import struct
import sys

import torch
import torch.nn.functional as F


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (header_len,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + header_len])
    base = 8 + header_len
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if info["dtype"] != "F32":
            raise ValueError(f"{name}: dtype {info['dtype']}, expected F32")
        begin, end = info["data_offsets"]
        flat = torch.frombuffer(bytearray(data[base + begin : base + end]), dtype=torch.float32)
        tensors[name] = flat.reshape(info["shape"]).clone()
    return tensors


def write_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        raw = tensors[name].detach().to(torch.float32).contiguous().numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(tensors[name].shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)


def grads(inputs, op, names, fn):
    """Runs fn on float64 leaves "<op>.<name>", backpropagates "<op>.dy" and
    returns {"<op>.d<name>": gradient}."""
    leaves = [inputs[f"{op}.{n}"].double().requires_grad_() for n in names]
    fn(*leaves).backward(inputs[f"{op}.dy"].double())
    return {f"{op}.d{n}": leaf.grad for n, leaf in zip(names, leaves)}


def main():
    inputs = read_safetensors(sys.argv[1])
    out = {}
    out.update(grads(inputs, "linear", ["x", "weight", "bias"], F.linear))
    out.update(grads(inputs, "layernorm", ["x", "weight", "bias"],
                     lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b, eps=1e-5)))
    out.update(grads(inputs, "softmax", ["x"], lambda x: torch.softmax(x, dim=-1)))
    out.update(grads(inputs, "gelu_tanh", ["x"], lambda x: F.gelu(x, approximate="tanh")))
    out.update(grads(inputs, "matmul", ["a", "b"], torch.matmul))
    ids = inputs["embedding.ids"].long()
    out.update(grads(inputs, "embedding", ["weight"], lambda w: F.embedding(ids, w)))
    write_safetensors(sys.argv[2], out)


if __name__ == "__main__":
    main()
