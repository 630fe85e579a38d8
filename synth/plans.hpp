#pragma once
// Built-in expert plan families, as strategy filters: `--plan NAME` solves for
// the cheapest plan inside the family, so the optimum can be compared with
// what an expert would write. The families are defined by the structure of
// the graph (rules and params), never by node or model names.
//
//  - "data-parallel": every parameter replicated; every graph input whose
//    dim 0 divides by the device count is sharded on dim 0 over all mesh
//    axes, the others replicated.
//  - "megatron" (Megatron-LM tensor parallelism on the mesh's last axis):
//    the "weight ops" (ops whose rule contracts a factor shared by a tensor
//    input and an untied parameter: Linear, Conv1D) are column-parallel (the
//    output-feature factor sharded on the last axis, the contracted factor
//    not) or row-parallel (the contracted factor sharded on the last axis,
//    leaving a partial sum that is all-reduced) by data flow: row when the
//    nearest weight ops upstream are all column, else column (GPT-2: c_attn
//    column, attn.c_proj row, c_fc column, mlp.c_proj row; Llama: q/k/v,
//    gate/up and an untied lm_head column, o_proj and down_proj row); their
//    parameters use no other axis. Everything else is
//    free: layernorm parameters are replicated by their rule anyway,
//    embeddings may be sharded (Megatron shards them too), activations take
//    whatever spec is cheapest, and other mesh axes may carry data
//    parallelism.
//  - "zero1", "zero2" and "fsdp": data-parallel ops, with every parameter's
//    optimizer state (zero1), state and gradient (zero2) or parameter,
//    gradient and state (fsdp: ZeRO-3) sharded
//    over the mesh axes its use leaves unused (synth/storage.hpp); and
//    "megatron-fsdp", Megatron's ops with fsdp's storage (on a 2-D mesh, the
//    parameters sharded over the data-parallel axis too). In inference
//    there is no storage choice: they are data-parallel and megatron.
//  The others store every parameter as its op reads it (no ZeRO).
//
// "random" is no family: `--plan random --seed N` draws one random legal plan
// instead of searching (synth/random_plan.hpp, synth::random_plan).
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.hpp"
#include "ir/mesh.hpp"
#include "synth/lowering.hpp"

namespace shardsynth::synth {

// The name of `--plan random`, which plan_filter does not take.
inline constexpr std::string_view kRandomPlan = "random";

// Throws ir::InputError naming an unknown plan (and for kRandomPlan).
StrategyFilter plan_filter(std::string_view name, const ir::Graph& graph, const ir::Mesh& mesh);
// The families, as the search's family starts try them (synth/family_starts.hpp),
// the random plan last. plan_filter also takes "zero2", which is left out
// here: the starts keep the families they had (zero1 and fsdp bracket it).
std::vector<std::string> plan_names();

}  // namespace shardsynth::synth
