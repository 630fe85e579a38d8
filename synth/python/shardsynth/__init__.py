"""shardsynth: provably optimal tensor shardings for a model on a device mesh.

The engine (`solve`, `builtin_graph`) is the pybind11 module `_native`; the
PyTorch side needs torch and, for models, transformers (the project's
.venv/, scripts/bootstrap):

    import shardsynth
    graph = shardsynth.trace(model, (input_ids,))          # nn.Module -> graph JSON
    plan = shardsynth.solve(graph, mesh="8", mode="training")
    model = shardsynth.parallelize(model, plan, device_mesh) # DTensor parameters

`trace`, `parallelize`, `to_tp_plan` and `parallelize_script` import torch
only when first used, so `import shardsynth` works without it.
"""
from typing import Any

from ._native import builtin_graph, solve

__all__ = ["solve", "builtin_graph", "trace", "write_graph", "parallelize", "to_tp_plan", "parallelize_script",
           "TraceError", "PlanError"]

# Attribute -> module that defines it, imported on first use.
_LAZY = {"trace": "tracing", "TraceError": "tracing", "write_graph": "tracing", "parallelize": "dtensor",
         "PlanError": "plan", "to_tp_plan": "tp_plan", "parallelize_script": "script"}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'shardsynth' has no attribute '{name}'")
    import importlib

    try:
        module = importlib.import_module(f".{_LAZY[name]}", __name__)
    except ModuleNotFoundError as e:
        if e.name in ("torch", "transformers"):
            raise ModuleNotFoundError(f"shardsynth.{name} needs {e.name}, which this Python lacks "
                                      f"(scripts/bootstrap installs it into .venv/)", name=e.name) from None
        raise
    value = getattr(module, name)
    globals()[name] = value
    return value
