"""A tensor moved from one spec to another as synth prices the move: the
steps of costs::plan_resharding (`shardsynth._native.reshard_steps`), each
run on the local shard with the one collective it names, over its mesh axis
(PyTorch's functional collectives, which CommDebugMode counts). DTensor's own
redistribute plans a move its way (another order of the axes, an all-gather
where synth sends an all-to-all) and places a dim sharded over several axes
left to right only; this runs synth's steps in synth's layout:

- a dim sharded by axes (major first) in b blocks holds, on each device, its
  part of every block: the block split by the major axis, that part split by
  the next. As DTensor placements (`placements`), mesh axis a of such a dim is
  a `_StridedShard` whose split factor is b times the sizes of the axes more
  major than a that come after a on the mesh (DTensor reads placements left
  to right), a plain `Shard` when that is 1; `spec_of` reads them back;
- all_gather: the axis' parts joined, each block's parts kept together;
- slice: the device's part of every block (nothing is sent);
- all_to_all: the new dim sliced that way and the old one gathered, as one
  all-to-all (DTensor's shard_dim_alltoall; gloo runs it as all-gather plus
  chunk, which comm_count counts as the all-to-all);
- reduce_scatter, all_reduce: the axis' partial sums summed (scattered into
  the device's part of every block).
"""
from __future__ import annotations

import functools
import itertools
from typing import Any

import torch

from .plan import PlanError, Spec, parse_spec


def spec_text(spec: Spec, ndim: int, mesh_rank: int) -> str:
    """Spec text describing all `ndim` dims (leading dims the spec leaves out are replicated);
    on a 1-D mesh without axis numbers, as docs/schedule_json.md writes it."""
    def axes_text(axes: tuple) -> str:
        return "".join(map(str, axes)) if mesh_rank > 1 else ""

    tokens = ["R"] * (ndim - len(spec.dims))
    for axes, blocks in zip(spec.dims, spec.blocks):
        tokens.append("R" if not axes else "S" + axes_text(axes) + (f"({blocks})" if blocks > 1 else ""))
    return "".join(tokens) + ("+P" + axes_text(spec.partial) if spec.partial else "")


def full(spec: Spec, ndim: int) -> Spec:
    """The spec with every one of the tensor's `ndim` dims described."""
    pad = ndim - len(spec.dims)
    return Spec(((),) * pad + tuple(spec.dims), (1,) * pad + tuple(spec.blocks), tuple(spec.partial))


def placements(spec: Spec, ndim: int, shape: tuple) -> list:
    """DTensor placements, one per mesh axis of a mesh of `shape` (see the module's doc)."""
    from torch.distributed.tensor import Partial, Replicate, Shard
    from torch.distributed.tensor.placement_types import _StridedShard

    if len(spec.dims) > ndim:
        raise PlanError(f"spec of {len(spec.dims)} dims for a tensor of {ndim}")
    spec = full(spec, ndim)
    out: list = [Replicate() for _ in shape]
    for d, (axes, blocks) in enumerate(zip(spec.dims, spec.blocks)):
        for i, a in enumerate(axes):
            split = blocks
            for major in axes[:i]:
                if major > a:
                    split *= shape[major]
            out[a] = _StridedShard(d, split_factor=split) if split > 1 else Shard(d)
    for a in spec.partial:
        out[a] = Partial()
    return out


def spec_of(places: Any, ndim: int, shape: tuple) -> Spec:
    """The spec of a DTensor's placements (any partial sum counting as one); the inverse of `placements`."""
    by_dim: dict = {}
    for a, p in enumerate(places):
        if hasattr(p, "dim") and not p.is_replicate() and not p.is_partial():
            by_dim.setdefault(p.dim, {})[a] = getattr(p, "split_factor", 1)
    dims: list = [() for _ in range(ndim)]
    blocks = [1] * ndim
    for d, splits in by_dim.items():
        dims[d], blocks[d] = _order(splits, shape)
    partial = tuple(a for a, p in enumerate(places) if p.is_partial())
    return Spec(tuple(dims), tuple(blocks), partial)


def _order(splits: dict, shape: tuple) -> tuple:
    """(axes major first, blocks) of one dim whose axes have these split factors."""
    last = max(splits)
    blocks = splits[last]
    for order in itertools.permutations(sorted(splits)):
        want = {a: blocks * _prod(shape[m] for m in order[:i] if m > a) for i, a in enumerate(order)}
        if want == splits:
            return tuple(order), blocks
    raise ValueError(f"placements with split factors {splits} are no spec's layout")


def _prod(values: Any) -> int:
    out = 1
    for v in values:
        out *= v
    return out


@functools.lru_cache(maxsize=None)
def _steps(src: str, dst: str, mesh: str) -> tuple:
    from . import _native

    return tuple(_native.reshard_steps(src, dst, mesh))


def move(value: Any, mesh: Any, dst: Spec) -> Any:
    """DTensor `value` in spec `dst`, moved by synth's steps (a view when it is there already)."""
    from torch.distributed.tensor import DTensor

    shape = tuple(int(n) for n in mesh.shape)
    ndim = value.dim()
    src = spec_of(value.placements, ndim, shape)
    dst = full(dst, ndim)
    if src == dst:
        return value.view_as(value)
    local = value.to_local()
    spec = src
    for step in _steps(spec_text(src, ndim, len(shape)), spec_text(dst, ndim, len(shape)), "x".join(map(str, shape))):
        local = _run(step, local, spec, mesh)
        spec = full(parse_spec(step["after"], len(shape)), ndim)
    return DTensor.from_local(local, mesh, placements(dst, ndim, shape), run_check=False, shape=value.shape,
                              stride=value.stride())


def _run(step: dict, local: torch.Tensor, spec: Spec, mesh: Any) -> torch.Tensor:
    import torch.distributed._functional_collectives as funcol
    import torch.distributed.tensor._collective_utils as utils

    kind, axis = step["kind"], step["axis"]
    n, group = mesh.size(axis), (mesh, axis)
    src, dst = step["src_dim"], step["dst_dim"]
    if kind == "all_reduce":
        return _wait(funcol.all_reduce(local, "sum", group))
    into = _blocks_into(spec, dst, step) if dst >= 0 else 1
    if kind == "slice":
        return _part(local, dst, into, n, mesh.get_local_rank(axis))
    if kind == "reduce_scatter":
        return _wait(funcol.reduce_scatter_tensor(_parts_first(local, dst, into, n), "sum", dst, group))
    if kind == "all_gather":
        return _joined(_wait(funcol.all_gather_tensor(local.contiguous(), src, group)), src, spec.blocks[src], n)
    # all_to_all: dst sliced, src gathered, in one collective (looked up now: comm_count wraps it)
    sent = utils.shard_dim_alltoall(_parts_first(local, dst, into, n), src, dst, mesh, axis)
    return _joined(_wait(sent), src, spec.blocks[src], n)


def _blocks_into(spec: Spec, dim: int, step: dict) -> int:
    """The blocks of `dim` a step shards: the step's own when it is the first to shard the dim."""
    return spec.blocks[dim] if spec.dims[dim] else int(step["dst_blocks"])


def _wait(t: Any) -> torch.Tensor:
    import torch.distributed._functional_collectives as funcol

    return t.wait() if isinstance(t, funcol.AsyncCollectiveTensor) else t


def _split(t: torch.Tensor, dim: int, sizes: tuple) -> torch.Tensor:
    shape = list(t.shape)
    return t.reshape(shape[:dim] + list(sizes) + shape[dim + 1:])


def _part(t: torch.Tensor, dim: int, blocks: int, n: int, me: int) -> torch.Tensor:
    """The me-th of n parts of every one of the dim's blocks."""
    size = t.shape[dim]
    parts = _split(t, dim, (blocks, n, size // (blocks * n)))
    return parts.select(dim + 1, me).reshape(t.shape[:dim] + (size // n,) + t.shape[dim + 1:]).contiguous()


def _parts_first(t: torch.Tensor, dim: int, blocks: int, n: int) -> torch.Tensor:
    """The dim reordered so that its i-th of n equal chunks is part i of every block (a plain scatter then gives each device its part)."""
    if blocks == 1:
        return t.contiguous()
    size = t.shape[dim]
    parts = _split(t, dim, (blocks, n, size // (blocks * n))).transpose(dim, dim + 1)
    return parts.reshape(t.shape).contiguous()


def _joined(t: torch.Tensor, dim: int, blocks: int, n: int) -> torch.Tensor:
    """A gathered dim (n devices' parts, each holding every block's part) back in block order."""
    if blocks == 1:
        return t
    size = t.shape[dim]
    parts = _split(t, dim, (n, blocks, size // (blocks * n))).transpose(dim, dim + 1)
    return parts.reshape(t.shape).contiguous()
