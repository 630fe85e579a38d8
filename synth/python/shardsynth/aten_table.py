"""What each ATen op of a torch.export graph becomes in shardsynth's graph
JSON: data, read by tracing.py. An op that is in none of these tables is an
error naming the op and the model's source line (or, with
unknown_ops="keep", a node of its own name as kind, which `synth
--unknown-ops=replicate` keeps replicated)."""

# Ops that compute nothing a plan can see: the node stands for its input.
ALIASES = frozenset({
    "alias", "clone", "contiguous", "detach", "lift_fresh_copy", "_assert_tensor_metadata",
})

# Ops that change only the dtype (to / _to_copy): an alias when the dtype stays.
DTYPE_CASTS = frozenset({"_to_copy", "to", "type_as"})

# Reshapes: `view` when the shape changes, an alias when it does not.
VIEWS = frozenset({"view", "reshape", "_unsafe_view", "unsqueeze", "squeeze", "flatten", "unflatten", "expand"})

# One-input elementwise ops, by ATen name -> op kind.
ELEMENTWISE = {"relu": "relu", "silu": "silu"}

# Parameterized ops read as (activation, weight[, bias]): ATen name -> op kind
# and the positions of its parameters with their names in the op table's order.
WITH_PARAMS = {
    "linear": ("linear", ((1, "weight"), (2, "bias"))),
    "embedding": ("embedding", ((0, "weight"),)),
    "layer_norm": ("layernorm", ((2, "weight"), (3, "bias"))),
}

# Modules kept whole: everything they run becomes one node of this kind
# (by class name; Hugging Face's RMSNorm classes match by suffix).
LEAF_MODULES = {
    "Conv1D": "conv1d",
    "NewGELUActivation": "gelu_tanh",
    "GELUTanh": "gelu_tanh",
    "PytorchGELUTanh": "gelu_tanh",
    "GELUActivation": "gelu",
}
RMS_NORM_SUFFIX = "RMSNorm"

# Functions kept whole, recognized by the call in the model's source line
# (torch.export's stack trace ends at the module's forward): each call on one
# tensor becomes one node of this kind.
LEAF_CALLS = {"apply_rotary_pos_emb(": "rotary"}

# Modules (by the start of their class's full name) that run one op: that op's
# node is named by the module's path, as a Slapo schedule keys it.
SINGLE_OP_MODULES = ("torch.nn.modules.", "transformers.activations.")
