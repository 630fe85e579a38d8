#pragma once
// `synth --memory-report`'s lines on the ops that normalize over a factor
// (ir::OpKindInfo::normalized: the cross-entropy loss head): the spec each
// reads its first operand (the logits) in and the bytes one device holds of
// it, against the whole tensor's, so a plan that shards the logits on the
// vocabulary shows it.
#include <string>

#include "synth/lowering.hpp"

namespace shardsynth::synth {

// One line per such op, "loss head 'loss' (cross_entropy): reads 'lm_head'
// [8, 1024, 128256] as RRS, 0.26 GB per device (whole: 2.10 GB)";
// empty when the graph has none.
std::string loss_head_text(const Lowered& lowered, const Assignment& assignment);

}  // namespace shardsynth::synth
