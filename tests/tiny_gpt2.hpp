#pragma once
// The small GPT-2 the tests share (the e2e tests' `gpt2 --layers L --embd 64
// --heads 4 --seq 16 --batch 8 --vocab 256`); `loss_head` gives the graph
// those commands build for training, which ends in its loss.
#include <cstdint>

#include "ir/gpt2.hpp"

namespace shardsynth::testing {

inline ir::Graph tiny_gpt2(int64_t layers, bool loss_head = false) {
  ir::Gpt2Config c;
  c.n_layer = layers;
  c.n_embd = 64;
  c.n_head = 4;
  c.seq = 16;
  c.batch = 8;
  c.vocab = 256;
  c.n_positions = 16;
  c.loss_head = loss_head;
  return ir::build_gpt2(c);
}

}  // namespace shardsynth::testing
