// The cross-entropy loss head in lowering: a vocabulary-sharded strategy pays
// the rows' statistics exchange (costs/row_exchange.hpp) forward and
// backward, a strategy that keeps the vocabulary whole pays none, and the
// memory report names the spec the head reads its logits in.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "costs/cost_model.hpp"
#include "costs/row_exchange.hpp"
#include "ir/gpt2.hpp"
#include "ir/mesh.hpp"
#include "synth/lowering.hpp"
#include "synth/report/loss_head_report.hpp"

namespace shardsynth::synth {

TEST_CASE("lower_LossHeadPaysTheExchangeWhereTheVocabularyIsSharded") {
  ir::Gpt2Config config;
  config.n_layer = 1;
  config.n_head = 4;
  config.n_embd = 64;
  config.seq = 16;
  config.batch = 8;
  config.vocab = 256;
  config.loss_head = true;
  const ir::Graph graph = ir::build_gpt2(config);
  const ir::Mesh mesh = ir::parse_mesh("8");
  const auto model = costs::make_cost_model("alpha-beta");
  LowerOptions options;
  options.mode = costs::Mode::training;
  const Lowered lowered = lower(graph, mesh, *model, options);
  const int loss = lowered.owner.at(*graph.find("loss"));
  REQUIRE(loss >= 0);
  // Factors of "abv,ab->": batch, seq, vocabulary.
  const auto rows_exchange = costs::row_exchange_cost(*model, costs::Mode::training, 8 * 16, {0}, mesh);
  REQUIRE(rows_exchange.has_value());
  CHECK(*rows_exchange > 0);
  int vocab_sharded = 0, whole = 0;
  for (const StrategyInfo& s : lowered.nodes[loss].strategies) {
    REQUIRE(s.factor_axes.size() == 3);
    if (!s.factor_axes[2].empty()) {
      ++vocab_sharded;
      CHECK(s.cost.exchange == *rows_exchange);
      CHECK(s.output.partial == std::vector<int>{0});  // the loss is a partial sum over the shards
    } else {
      ++whole;
      CHECK(s.cost.exchange == 0);
    }
  }
  CHECK(vocab_sharded > 0);
  CHECK(whole > 0);
  // The report names the spec the chosen strategy reads the logits in.
  Assignment assignment(lowered.problem.nodes.size(), 0);
  for (std::size_t i = 0; i < lowered.nodes[loss].strategies.size(); ++i) {
    const auto& axes = lowered.nodes[loss].strategies[i].factor_axes;
    if (axes[0].empty() && axes[1].empty() && axes[2] == std::vector<int>{0}) assignment[loss] = static_cast<int>(i);
  }
  const std::string text = loss_head_text(lowered, assignment);
  CAPTURE(text);
  CHECK(text.find("loss head 'loss' (cross_entropy): reads 'lm_head' [8, 16, 256] as RRS, ") == 0);
}

}  // namespace shardsynth::synth
