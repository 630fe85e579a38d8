"""A tiny language-model head whose forward ends in F.cross_entropy over the
flattened logits, as Hugging Face's models compute their loss, exported with
examples/export_fx.py: fx_export_test checks that the loss becomes the op
table's `cross_entropy` (divisor: the label count), which `synth` plans.

    /usr/bin/python3 tests/e2e/fx_cross_entropy.py EXAMPLES_DIR OUT.json
"""
import sys

import torch
import torch.nn.functional as F
from torch import nn


class LossHead(nn.Module):
    """x -> lm_head -> cross_entropy(logits [N, vocab], labels [N])."""

    def __init__(self, hidden: int = 16, vocab: int = 64) -> None:
        super().__init__()
        self.vocab = vocab
        self.lm_head = nn.Linear(hidden, vocab, bias=False)

    def forward(self, x: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        logits = self.lm_head(x)
        return F.cross_entropy(logits.view(-1, self.vocab), labels.view(-1))


if __name__ == "__main__":
    sys.path.insert(0, sys.argv[1])
    import export_fx

    example = (torch.zeros(4, 8, 16), torch.zeros(4, 8, dtype=torch.int64))
    export_fx.write_graph(export_fx.export_graph(LossHead(), example), sys.argv[2])
