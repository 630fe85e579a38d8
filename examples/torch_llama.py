"""Llama (Hugging Face LlamaForCausalLM's eval forward, eager attention) in plain torch.

Module names, parameter names and layouts follow Hugging Face checkpoints:
model.embed_tokens, model.layers.N.input_layernorm, model.layers.N.self_attn
.{q,k,v,o}_proj (nn.Linear without bias: weight stored [out, in]),
model.layers.N.post_attention_layernorm, model.layers.N.mlp.{gate,up,down}_proj,
model.norm and lm_head, tied to model.embed_tokens when tie_word_embeddings.
Rotary embeddings use the plain rotate-half form with base `theta` (no
rope_scaling). Exported with `examples/export_fx.py llama`, it solves to the
same optimum as `synth llama` for the same sizes.
"""
import math

import torch
import torch.fx
from torch import nn

# What a masked score becomes: the lowest finite float32, as torch.finfo(torch.float32).min.
LOWEST = -3.4028234663852886e38


def apply_rotary(x, theta):
    """x[..., seq, head_dim] turned pairwise (i with i + head_dim/2) by position p's angles p * theta^(-2i/head_dim)."""
    seq, dim = x.shape[-2], x.shape[-1]
    inv_freq = 1.0 / (theta ** (torch.arange(0, dim, 2, dtype=torch.int64, device=x.device).float() / dim))
    freqs = torch.outer(torch.arange(seq, device=x.device).float(), inv_freq)
    angles = torch.cat((freqs, freqs), dim=-1)
    half = dim // 2
    rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
    return x * angles.cos() + rotated * angles.sin()


def repeat_kv(x, n_rep):
    """[b, kv, s, d] -> [b, kv * n_rep, s, d], each key/value head repeated n_rep times in place."""
    b, kv, s, d = x.shape
    return x[:, :, None, :, :].expand(b, kv, n_rep, s, d).reshape(b, kv * n_rep, s, d)


def causal_tril(t, device):
    """The [t, t] lower-triangular boolean mask (one fx node that depends on a size only: folded)."""
    return torch.ones(t, t, dtype=torch.bool, device=device).tril()


for _name in ("apply_rotary", "repeat_kv", "causal_tril"):
    torch.fx.wrap(_name)


class LlamaRMSNorm(nn.Module):
    """x / sqrt(mean(x^2) + eps) * weight over the last dim."""

    def __init__(self, hidden, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden))
        self.variance_epsilon = eps

    def forward(self, x):
        variance = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(variance + self.variance_epsilon))


class LlamaAttention(nn.Module):
    """Grouped-query causal attention with rotary q and k."""

    def __init__(self, hidden, heads, kv_heads, theta):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim, self.theta = heads, kv_heads, hidden // heads, theta
        self.q_proj = nn.Linear(hidden, heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(hidden, kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(hidden, kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(heads * self.head_dim, hidden, bias=False)

    def forward(self, x):
        b, t = x.size(0), x.size(1)  # no tuple unpacking: fx cannot iterate a traced value
        q = self.q_proj(x).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        q, k = apply_rotary(q, self.theta), apply_rotary(k, self.theta)
        if self.heads != self.kv_heads:
            k, v = repeat_kv(k, self.heads // self.kv_heads), repeat_kv(v, self.heads // self.kv_heads)
        scores = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.head_dim)
        scores = torch.where(causal_tril(t, x.device), scores, LOWEST)
        context = torch.matmul(torch.softmax(scores, dim=-1), v)
        return self.o_proj(context.transpose(1, 2).contiguous().view(b, t, self.heads * self.head_dim))


class LlamaMLP(nn.Module):
    """SwiGLU: down_proj(silu(gate_proj(x)) * up_proj(x))."""

    def __init__(self, hidden, ffn):
        super().__init__()
        self.gate_proj = nn.Linear(hidden, ffn, bias=False)
        self.up_proj = nn.Linear(hidden, ffn, bias=False)
        self.down_proj = nn.Linear(ffn, hidden, bias=False)
        self.act_fn = nn.SiLU()

    def forward(self, x):
        return self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))


class LlamaDecoderLayer(nn.Module):
    """Pre-norm attention and MLP, each added to the residual stream."""

    def __init__(self, hidden, heads, kv_heads, ffn, theta, eps):
        super().__init__()
        self.input_layernorm = LlamaRMSNorm(hidden, eps)
        self.self_attn = LlamaAttention(hidden, heads, kv_heads, theta)
        self.post_attention_layernorm = LlamaRMSNorm(hidden, eps)
        self.mlp = LlamaMLP(hidden, ffn)

    def forward(self, x):
        x = x + self.self_attn(self.input_layernorm(x))
        return x + self.mlp(self.post_attention_layernorm(x))


class LlamaModel(nn.Module):
    """embed_tokens -> layers -> norm."""

    def __init__(self, layers, hidden, heads, kv_heads, ffn, vocab, theta, eps):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, hidden)
        self.layers = nn.ModuleList(LlamaDecoderLayer(hidden, heads, kv_heads, ffn, theta, eps) for _ in range(layers))
        self.norm = LlamaRMSNorm(hidden, eps)

    def forward(self, input_ids):
        x = self.embed_tokens(input_ids)
        for layer in self.layers:
            x = layer(x)
        return self.norm(x)


class LlamaForCausalLM(nn.Module):
    """input_ids -> model -> lm_head (tied to model.embed_tokens when `tied`) -> logits."""

    def __init__(self, layers=32, hidden=4096, heads=32, kv_heads=8, ffn=14336, vocab=128256, tied=False,
                 theta=500000.0, eps=1e-5):
        super().__init__()
        if hidden % heads or heads % kv_heads or (hidden // heads) % 2:
            raise ValueError(f"heads {heads} must divide hidden {hidden}, kv_heads {kv_heads} must divide heads, "
                             f"and the head dim must be even")
        self.model = LlamaModel(layers, hidden, heads, kv_heads, ffn, vocab, theta, eps)
        self.lm_head = nn.Linear(hidden, vocab, bias=False)
        if tied:
            self.lm_head.weight = self.model.embed_tokens.weight

    def forward(self, input_ids):
        return self.lm_head(self.model(input_ids))


def example_inputs(batch=8, seq=1024):
    """input_ids [batch, seq], int64."""
    return (torch.zeros(batch, seq, dtype=torch.int64),)
