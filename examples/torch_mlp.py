"""The built-in `mlp` model in plain torch: x -> fc1 Linear -> gelu -> fc2.

Exported with `examples/export_fx.py mlp`, it gives the same graph as
`synth mlp` for the same sizes (node names x, fc1, gelu, fc2, output).
"""
import torch
import torch.nn.functional as F
from torch import nn


class Mlp(nn.Module):
    """Two Linear layers around a gelu, as ir::build_mlp builds it."""

    def __init__(self, hidden=1024, ffn=4096):
        super().__init__()
        self.fc1 = nn.Linear(hidden, ffn)
        self.fc2 = nn.Linear(ffn, hidden)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


def example_inputs(batch=8, seq=1024, hidden=1024):
    """x: [batch, seq, hidden] float32 (the exporter moves it to the meta device)."""
    return (torch.zeros(batch, seq, hidden),)
