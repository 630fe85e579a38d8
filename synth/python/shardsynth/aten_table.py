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

# Every op kind of shardsynth's op table that the importer makes, with what
# it comes from; tests/python/op_registry_check.py holds this, with
# NOT_IMPORTED, equal to the op table, and checks that the importer's code
# names each kind it declares.
IMPORTED_KINDS = {
    "add": "aten.add of two activations (a residual)",
    "causal_mask": "aten.add of an attention mask, or eager attention's masked_fill/where",
    "cross_entropy": "aten.cross_entropy_loss, the mean without weights (a causal LM given shift_labels)",
    "conv1d": "Hugging Face's Conv1D module, kept whole",
    "dropout": "aten.dropout",
    "embedding": "aten.embedding",
    "gelu": "GELUActivation, kept whole",
    "gelu_tanh": "NewGELUActivation and its GELUTanh aliases, kept whole",
    "layernorm": "aten.layer_norm",
    "linear": "aten.linear",
    "matmul": "aten.matmul and aten.bmm",
    "mul": "aten.mul of two activations of one shape",
    "permute": "aten.permute",
    "relu": "aten.relu",
    "repeat_kv": "grouped-query attention's expand and reshape of the KV heads",
    "rms_norm": "a module whose class name ends in RMSNorm, kept whole",
    "rotary": "apply_rotary_pos_emb calls, kept whole",
    "scale": "aten.mul or aten.div by a number",
    "silu": "aten.silu",
    "softmax": "aten.softmax and aten._softmax",
    "split": "aten.split, split_with_sizes and slices of a fused projection",
    "transpose": "aten.transpose and aten.t",
    "view": "aten.view, reshape, flatten, unsqueeze, squeeze and expand when the shape changes",
}

# Op-table kinds the importer never makes, with the reason.
NOT_IMPORTED = {
    "opaque": "the table's stand-in for an op outside it (synth --unknown-ops=replicate); the importer names "
              "such an op in its error instead",
}
