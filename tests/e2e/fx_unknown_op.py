"""A tiny module with an op shardsynth's op table lacks (torch.sin), exported
with examples/export_fx.py: fx_export_test checks that `synth` names it, and
keeps it replicated with --unknown-ops=replicate.

    .venv/bin/python tests/e2e/fx_unknown_op.py EXAMPLES_DIR OUT.json
"""
import sys

import torch
from torch import nn


class SinMlp(nn.Module):
    """x -> fc1 -> sin -> fc2."""

    def __init__(self, hidden=16, ffn=32):
        super().__init__()
        self.fc1 = nn.Linear(hidden, ffn)
        self.fc2 = nn.Linear(ffn, hidden)

    def forward(self, x):
        return self.fc2(torch.sin(self.fc1(x)))


if __name__ == "__main__":
    sys.path.insert(0, sys.argv[1])
    import export_fx

    export_fx.write_graph(export_fx.export_graph(SinMlp(), (torch.zeros(4, 8, 16),)), sys.argv[2])
