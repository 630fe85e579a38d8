"""GPT-2 (Hugging Face GPT2LMHeadModel's eval forward) in plain torch.

Module names, parameter names and layouts follow Hugging Face checkpoints:
wte, wpe, h.N.ln_1, h.N.attn.c_attn (Conv1D: weight stored [in, out]),
h.N.attn.c_proj, h.N.ln_2, h.N.mlp.c_fc, h.N.mlp.c_proj, ln_f, and lm_head
(no bias) tied to wte. Exported with `examples/export_fx.py gpt2`, it solves
to the same optimum as `synth gpt2` for the same sizes.
"""
import math

import torch
import torch.fx
from torch import nn


def causal_slice(bias, t):
    """The [1, 1, t, t] corner of the causal-mask buffer (one fx node: a slice with a traced size)."""
    return bias[:, :, :t, :t]


torch.fx.wrap("causal_slice")


class Conv1D(nn.Module):
    """Hugging Face's Conv1D: a Linear whose weight is stored [in, out]."""

    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        self.weight = nn.Parameter(torch.empty(nx, nf).normal_(std=0.02))
        self.bias = nn.Parameter(torch.zeros(nf))

    def forward(self, x):
        size_out = x.size()[:-1] + (self.nf,)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return x.view(size_out)


class NewGELUActivation(nn.Module):
    """The tanh approximation of gelu that GPT-2 uses."""

    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class Attention(nn.Module):
    """GPT2Attention's eager path: fused qkv, causal softmax attention, output projection."""

    def __init__(self, embd, heads, positions):
        super().__init__()
        self.embd, self.heads = embd, heads
        self.register_buffer("bias", torch.tril(torch.ones(positions, positions, dtype=torch.bool)).view(
            1, 1, positions, positions))
        self.register_buffer("masked_bias", torch.tensor(-1e4))
        self.c_attn = Conv1D(3 * embd, embd)
        self.c_proj = Conv1D(embd, embd)
        self.attn_dropout = nn.Dropout(0.1)
        self.resid_dropout = nn.Dropout(0.1)

    def split_heads(self, x, b, t):
        return x.view(b, t, self.heads, self.embd // self.heads).permute(0, 2, 1, 3)

    def forward(self, x):
        b, t = x.size(0), x.size(1)  # no tuple unpacking: fx cannot iterate a traced value
        qkv = self.c_attn(x).split(self.embd, dim=2)
        query, key, value = self.split_heads(qkv[0], b, t), self.split_heads(qkv[1], b, t), self.split_heads(qkv[2], b, t)
        scores = torch.matmul(query, key.transpose(-1, -2))
        scores = scores / math.sqrt(self.embd // self.heads)
        mask = causal_slice(self.bias, t)
        scores = torch.where(mask, scores, self.masked_bias)
        probs = self.attn_dropout(torch.softmax(scores, dim=-1))
        context = torch.matmul(probs, value)
        merged = context.permute(0, 2, 1, 3).contiguous().view(b, t, self.embd)
        return self.resid_dropout(self.c_proj(merged))


class Mlp(nn.Module):
    """GPT2MLP: c_fc -> gelu (tanh) -> c_proj -> dropout."""

    def __init__(self, embd):
        super().__init__()
        self.c_fc = Conv1D(4 * embd, embd)
        self.act = NewGELUActivation()
        self.c_proj = Conv1D(embd, 4 * embd)
        self.dropout = nn.Dropout(0.1)

    def forward(self, x):
        return self.dropout(self.c_proj(self.act(self.c_fc(x))))


class Block(nn.Module):
    """GPT2Block: pre-norm attention and MLP, each added to the residual stream."""

    def __init__(self, embd, heads, positions):
        super().__init__()
        self.ln_1 = nn.LayerNorm(embd)
        self.attn = Attention(embd, heads, positions)
        self.ln_2 = nn.LayerNorm(embd)
        self.mlp = Mlp(embd)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class Gpt2(nn.Module):
    """input_ids, position_ids -> wte + wpe -> blocks -> ln_f -> lm_head (tied to wte) -> logits."""

    def __init__(self, layers=12, heads=12, embd=768, vocab=50257, positions=1024):
        super().__init__()
        if embd % heads:
            raise ValueError(f"heads {heads} does not divide embd {embd}")
        self.wte = nn.Embedding(vocab, embd)
        self.wpe = nn.Embedding(positions, embd)
        self.drop = nn.Dropout(0.1)
        self.h = nn.ModuleList(Block(embd, heads, positions) for _ in range(layers))
        self.ln_f = nn.LayerNorm(embd)
        self.lm_head = nn.Linear(embd, vocab, bias=False)
        self.lm_head.weight = self.wte.weight

    def forward(self, input_ids, position_ids):
        x = self.drop(self.wte(input_ids) + self.wpe(position_ids))
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))


def example_inputs(batch=8, seq=1024):
    """input_ids [batch, seq] and position_ids [1, seq], both int64."""
    return (torch.zeros(batch, seq, dtype=torch.int64), torch.arange(seq, dtype=torch.int64).unsqueeze(0))
