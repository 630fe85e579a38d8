"""shardsynth.reshard: synth's layout of a spec as DTensor placements, in one
process on torch's fake process group (world size 8, each rank in turn).
Run by ctest with the project's .venv: python reshard_test.py PACKAGE_DIR.

For every spec below on mesh 2x4 (and 8): the placements read back to the
spec (spec_of), and the shard that synth's own slice steps cut from a
replicated tensor (reshard.move: no collective) is the shard DTensor's
distribute_tensor cuts for those placements, on every rank. So a dim
sharded over both axes keeps synth's axis order (S10: axis 1 major) and a
blocked dim its blocks (S1(3))."""
from __future__ import annotations

import sys
import unittest

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import DTensor, Replicate, Shard, distribute_tensor
from torch.distributed.tensor.placement_types import _StridedShard
from torch.testing._internal.distributed.fake_pg import FakeStore

PACKAGE_DIR = sys.argv[1]
sys.path.insert(0, PACKAGE_DIR)
from shardsynth.plan import parse_spec  # noqa: E402
from shardsynth.reshard import move, placements, spec_of  # noqa: E402

SPECS_2X4 = ["S01R", "S10R", "RS01", "RS10", "S0S1", "S1S0", "RS1(3)", "RS0(3)", "RS01(3)", "RS10(3)",
             "S1S0(3)", "S10(3)R"]
SPECS_8 = ["SR", "RS", "RS(3)", "S(3)R"]


class ReshardTest(unittest.TestCase):
    def tearDown(self) -> None:
        if dist.is_initialized():
            dist.destroy_process_group()

    def test_s10_is_axis_1_major(self) -> None:
        self.assertEqual(placements(parse_spec("S10R", 2), 2, (2, 4)), [_StridedShard(0, split_factor=4), Shard(0)])
        self.assertEqual(placements(parse_spec("S01R", 2), 2, (2, 4)), [Shard(0), Shard(0)])
        self.assertEqual(placements(parse_spec("RS1(3)", 2), 2, (2, 4)), [Replicate(), _StridedShard(1, split_factor=3)])

    def check(self, mesh_shape: tuple, specs: list) -> None:
        size = 1
        for n in mesh_shape:
            size *= n
        # dims of 2 * 3 * 8 and 3 * 8 * 4 elements: every spec's shards divide them
        whole = torch.arange(48 * 96, dtype=torch.float32).reshape(48, 96)
        for rank in range(size):
            dist.init_process_group("fake", store=FakeStore(), rank=rank, world_size=size)
            mesh = init_device_mesh("cpu", mesh_shape)
            for text in specs:
                spec = parse_spec(text, len(mesh_shape))
                with self.subTest(spec=text, rank=rank):
                    place = placements(spec, 2, mesh_shape)
                    self.assertEqual(spec_of(place, 2, mesh_shape), spec)
                    replicated = DTensor.from_local(whole, mesh, [Replicate()] * len(mesh_shape), run_check=False)
                    ours = move(replicated, mesh, spec).to_local()
                    theirs = distribute_tensor(whole, mesh, place, src_data_rank=None).to_local()  # cut, not sent
                    self.assertTrue(torch.equal(ours, theirs), f"{text} on rank {rank}")
            dist.destroy_process_group()

    def test_layouts_on_2x4(self) -> None:
        self.check((2, 4), SPECS_2X4)

    def test_layouts_on_8(self) -> None:
        self.check((8,), SPECS_8)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
