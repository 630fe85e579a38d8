"""Reference for the C++ fairscale cut rule (synth/stage_cuts.cpp).

An independent Python walk of fairscale's auto-shard rule (_split_nodes in
fairscale.experimental.nn.auto_shard), run on a graph described as JSON:

  {"shard_count": 4,
   "nodes": [{"name": "h.0.ln_1", "op": "call_module" | "call_function" | "placeholder" | "output",
              "args": ["input name", ...],
              "params": [{"name": "weight", "numel": 768, "tied_to": ""}, ...]}, ...]}

Node names are written as fx writes them ("." -> "_"); every dotted prefix of
a node holding parameters is a module, as torch's named_modules() would list
it. Prints {"node name": shard id} as JSON.

Usage: fairscale_reference.py GRAPH.json
"""
import json
import sys


def module_param_counts(nodes):
    """name -> parameter count, like {name: sum(p.numel() for p in m.parameters())}."""
    members = {"": {}}
    for node in nodes:
        for p in node["params"]:
            tensor = p["tied_to"] or node["name"] + "." + p["name"]
            members[""][tensor] = p["numel"]
            parts = node["name"].split(".")
            for k in range(1, len(parts) + 1):
                members.setdefault("_".join(parts[:k]), {})[tensor] = p["numel"]
    return {name: sum(tensors.values()) for name, tensors in members.items()}


def get_count(param_count, node_name):
    if node_name in param_count:
        return param_count[node_name]
    if node_name.split("_")[0] in param_count:
        return param_count[node_name.split("_")[0]]
    raise RuntimeError(node_name)


def shard_to_param_count(param_count, node_name_to_shard_id):
    counts = {}
    for node_name, shard in node_name_to_shard_id.items():
        try:
            count = get_count(param_count, node_name)
        except RuntimeError:
            continue
        counts[shard] = counts.get(shard, 0) + count
    return counts


def split_nodes(nodes, shard_count):
    param_count = module_param_counts(nodes)
    per_shard_param = param_count[""] // shard_count
    node_name_to_shard_id = {}
    nodes_so_far = []
    shard_id = 0
    fx = lambda name: name.replace(".", "_")
    for node in nodes:
        name = fx(node["name"])
        if node["op"] == "placeholder":
            node_name_to_shard_id[name] = shard_id
            nodes_so_far.append(name)
        elif node["op"] == "output":
            break
        else:
            min_shard_id, min_node_name = shard_id, ""
            for arg in map(fx, node["args"]):
                if arg in node_name_to_shard_id and arg != nodes_so_far[-1]:
                    if node_name_to_shard_id[arg] < min_shard_id:
                        min_shard_id, min_node_name = node_name_to_shard_id[arg], arg
            if min_shard_id < shard_id:
                for earlier in reversed(nodes_so_far):
                    node_name_to_shard_id[earlier] = min_shard_id
                    if earlier == min_node_name:
                        break
                shard_id = min_shard_id
            node_name_to_shard_id[name] = shard_id
            nodes_so_far.append(name)
            counts = shard_to_param_count(param_count, node_name_to_shard_id)
            if shard_id in counts and counts[shard_id] > per_shard_param:
                shard_id += 1
    return node_name_to_shard_id


def main():
    with open(sys.argv[1]) as f:
        graph = json.load(f)
    print(json.dumps(split_nodes(graph["nodes"], graph["shard_count"]), sort_keys=True))


if __name__ == "__main__":
    main()
