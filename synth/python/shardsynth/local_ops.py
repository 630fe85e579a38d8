"""Ops run on the local shards, as the plan's op rule computes them (DTensor's
own strategy may not): grouped-query attention's repeat of the KV
heads (`repeat_kv_local`), an embedding whose vocabulary is sharded
(`embedding_local`: DTensor's backward of its masked partial sum gathers the
weight's gradient), and a matrix product (aten.linear, addmm, mm) on operands
with a dim sharded in blocks or strides (`_StridedShard`: GPT-2's fused
q|k|v, or the rows of a flatten whose inner dim is sharded), flattened
batch dims sharded over several mesh axes, or a bias next to a partial sum.
DTensor gathers such an operand first, or flattens it into a strided shard
it then cannot unflatten.

Per mesh axis, from the operands' placements (`local_map`):
- the input's batch (row) dims sharded: the output's same dims, the same way;
- the weight's output features sharded: the output's last dim, the same way;
- the contraction dim sharded on both: a pending partial sum (Partial);
- otherwise replicated.
A bias follows the output's last dim; a bias on a partial sum is added by
DTensor after the local product (its Replicate -> Partial split, nothing
sent). Anything else (a Partial operand, a contraction sharded on one side
only) returns None, and DTensor runs the op.

The gradients, per axis: the input's is partial where the weight's output
features are sharded; the weight's and the bias's are partial where the
input's batch dims are sharded (they are contracted in the backward)."""
from __future__ import annotations

from typing import Any, Optional

import torch

_LINEAR = torch.ops.aten.linear.default
_ADDMM = torch.ops.aten.addmm.default
_MM = torch.ops.aten.mm.default
_EMBEDDING = torch.ops.aten.embedding.default


def _sharded(p: Any) -> bool:
    """A Shard or a _StridedShard (both have a dim; Replicate and Partial have none)."""
    return hasattr(p, "dim") and not p.is_partial() and not p.is_replicate()


def _strided(p: Any) -> bool:
    return _sharded(p) and type(p).__name__ == "_StridedShard"


def _moved(p: Any, dim: int) -> Any:
    """Placement `p` on dim `dim`, the same way (plain, or strided with its split factor)."""
    from torch.distributed.tensor import Shard
    from torch.distributed.tensor.placement_types import _StridedShard

    return _StridedShard(dim, split_factor=p.split_factor) if _strided(p) else Shard(dim)


def wants_local(target: Any, args: tuple) -> bool:
    """Whether this op is a matrix product or an embedding with a sharded vocabulary: run_local
    runs it by the op rule whenever its operands' placements fit one (DTensor's strategy may
    gather an operand the rule keeps sharded)."""
    if target is _EMBEDDING:
        return hasattr(args[0], "placements") and any(_sharded(p) and p.dim == 0 for p in args[0].placements)
    return target in (_LINEAR, _ADDMM, _MM)


def run_local(target: Any, args: tuple, kwargs: dict) -> Optional[Any]:
    """The op on local shards (module doc), or None where its placements do not fit the rule."""
    if kwargs or not all(hasattr(a, "placements") for a in args):
        return None
    if target is _EMBEDDING:
        return embedding_local(*args)
    if target is _LINEAR:
        x, w, b = args[0], args[1], (args[2] if len(args) > 2 else None)
        out_dim, in_dim = 0, 1
    elif target is _ADDMM:
        b, x, w = args
        out_dim, in_dim = 1, 0
    else:
        x, w, b = args[0], args[1], None
        out_dim, in_dim = 1, 0
    out = _out_placements(x, w, out_dim, in_dim)
    if out is None:
        return None
    partial = any(p.is_partial() for p in out)
    if b is not None and not partial and any(not _same_as_last(pb, po, x.dim()) for pb, po in zip(b.placements, out)):
        return None
    y = _run(x, w, None if partial else b, out, out_dim, target)
    return y + b if partial and b is not None else y


def _out_placements(x: Any, w: Any, out_dim: int, in_dim: int) -> Optional[list]:
    from torch.distributed.tensor import Partial, Replicate

    last = x.dim() - 1
    out: list = []
    for px, pw in zip(x.placements, w.placements):
        if px.is_partial() or pw.is_partial():
            return None
        x_contracted = _sharded(px) and px.dim == last
        w_contracted = _sharded(pw) and pw.dim == in_dim
        if x_contracted != w_contracted or (x_contracted and px != _moved(pw, last)):
            return None
        if x_contracted:
            out.append(Partial())
        elif _sharded(pw):
            out.append(_moved(pw, last) if not _sharded(px) else None)
        elif _sharded(px):
            out.append(px)
        else:
            out.append(Replicate())
    return None if any(p is None for p in out) else out


def _same_as_last(pb: Any, po: Any, ndim: int) -> bool:
    """The bias' placement on one axis is the output's, moved from its last dim to the bias' only dim."""
    if _sharded(po) and po.dim == ndim - 1:
        return _sharded(pb) and pb == _moved(po, 0)
    return pb.is_replicate()


def _run(x: Any, w: Any, b: Any, out: list, out_dim: int, target: Any) -> Any:
    from torch.distributed.tensor import Partial
    from torch.distributed.tensor.experimental import local_map

    batch = [_sharded(px) and px.dim < x.dim() - 1 for px in x.placements]
    grad_x = [Partial() if _sharded(pw) and pw.dim == out_dim else px for px, pw in zip(x.placements, w.placements)]
    grad_w = [Partial() if row else pw for row, pw in zip(batch, w.placements)]
    inputs = [x.placements, w.placements]
    grads = [grad_x, grad_w]
    if b is not None:
        inputs.append(b.placements)
        grads.append([Partial() if row else pb for row, pb in zip(batch, b.placements)])

    def product(xl: torch.Tensor, wl: torch.Tensor, bl: Optional[torch.Tensor] = None) -> torch.Tensor:
        y = torch.nn.functional.linear(xl, wl) if target is _LINEAR else xl @ wl
        return y if bl is None else y + bl

    run = local_map(product, out_placements=out, in_placements=tuple(inputs), in_grad_placements=tuple(grads))
    return run(x, w, b) if b is not None else run(x, w)



def repeat_kv_local(x: Any, out_spec: Any, out_shape: list, mesh: Any) -> Optional[Any]:
    """Grouped-query attention's repeat of the KV heads (dim -3 of [batch, kv heads, seq, dim]) on
    the local shard, into `out_spec` as the op's rule lays it out: each device repeats its own
    KV heads as many times as its part of the repeats holds. Where the repeated heads are
    sharded by axes the KV heads are not (each KV head's block of repeats split), the local
    gradient is a partial sum over those axes, as the plan prices it. None for layouts this
    does not cover (DTensor runs the ops then)."""
    from torch.distributed.tensor import Partial
    from torch.distributed.tensor.experimental import local_map

    from .reshard import full, placements, spec_of

    if not hasattr(x, "placements") or x.dim() < 3:
        return None
    shape = tuple(int(n) for n in mesh.shape)
    src = spec_of(x.placements, x.dim(), shape)
    dst = full(out_spec, x.dim())
    head = x.dim() - 3
    kv, heads = x.shape[head], out_shape[head]
    if src.partial or dst.partial or any(src.dims[d] != dst.dims[d] or src.blocks[d] != dst.blocks[d]
                                         for d in range(x.dim()) if d != head):
        return None
    have, want = src.dims[head], dst.dims[head]
    extra = want[len(have):]
    if want[:len(have)] != have or src.blocks[head] != 1:
        return None
    kv_local = kv
    for a in have:
        kv_local //= shape[a]
    # the repeats split within each local KV head: blocks of one KV head each, or one local KV head
    if extra and not (dst.blocks[head] == kv and not have) and not (dst.blocks[head] == 1 and kv_local == 1):
        return None
    if not extra and dst.blocks[head] != 1:
        return None
    split = 1
    for a in extra:
        split *= shape[a]
    if heads % kv or (heads // kv) % split:
        return None
    repeats = heads // kv // split
    grad = [Partial() if a in extra else p for a, p in enumerate(x.placements)]
    run = local_map(lambda t: t.repeat_interleave(repeats, dim=head),
                    out_placements=placements(dst, x.dim(), shape), in_placements=(x.placements,),
                    in_grad_placements=(grad,))
    return run(x)


def embedding_local(weight: Any, ids: Any, *rest: Any) -> Optional[Any]:
    """aten.embedding with the vocabulary (weight dim 0) sharded, in one block, on local shards: each
    device looks up the ids in its rows, zeros the others, and leaves a partial sum on the axes
    that shard the vocabulary; the weight's gradient stays in its rows (sharded), partial over the
    axes that shard the ids. None for other layouts or arguments."""
    from torch.distributed.tensor import Partial, Replicate, Shard
    from torch.distributed.tensor.experimental import local_map

    from .reshard import spec_of

    mesh = weight.device_mesh
    shape = tuple(int(n) for n in mesh.shape)
    spec = spec_of(weight.placements, weight.dim(), shape)
    vocab = spec.dims[0]
    if rest or not vocab or spec.blocks[0] != 1 or any(_strided(p) for p in ids.placements) \
            or any(p.is_partial() for p in tuple(weight.placements) + tuple(ids.placements)):
        return None
    out, grad_w = [], []
    for a, (pw, pi) in enumerate(zip(weight.placements, ids.placements)):
        if _sharded(pw) and _sharded(pi):
            return None
        out.append(Partial() if a in vocab else Shard(ids.dim()) if _sharded(pw)
                   else pi if _sharded(pi) else Replicate())
        grad_w.append(Partial() if _sharded(pi) else pw)
    index = 0
    for a in vocab:  # major first: the device's block of rows in mixed radix
        index = index * shape[a] + mesh.get_local_rank(a)
    rows = weight.shape[0]
    for a in vocab:
        rows //= shape[a]
    start = index * rows

    def lookup(w: torch.Tensor, i: torch.Tensor) -> torch.Tensor:
        outside = (i < start) | (i >= start + rows)
        found = torch.nn.functional.embedding((i - start).masked_fill(outside, 0), w)
        return found * (~outside).unsqueeze(-1).to(found.dtype)

    run = local_map(lookup, out_placements=out, in_placements=(weight.placements, ids.placements),
                    in_grad_placements=(grad_w, ids.placements))
    return run(weight, ids)
