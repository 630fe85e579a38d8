// The neighbourhood portfolio of the Lagrangian search
// (synth/solver/neighbourhood_portfolio.hpp): which moves run each round,
// in which order, and how a fruitless one backs off. Fake neighbourhoods
// script their outcomes; the context they get is a real one on a tiny
// folded problem.
#include <doctest/doctest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "synth/solver/bnb_neighbourhood.hpp"
#include "synth/solver/folding.hpp"
#include "synth/solver/local_search.hpp"
#include "synth/solver/neighbourhood.hpp"
#include "synth/solver/neighbourhood_portfolio.hpp"

namespace shardsynth::synth {
namespace {

// Returns its scripted outcomes in turn (then fruitless ones) and logs each call.
class Scripted final : public Neighbourhood {
 public:
  Scripted(std::string name, int max_backoff, std::vector<NeighbourhoodOutcome> script, std::vector<std::string>& calls)
      : name_(std::move(name)), max_backoff_(max_backoff), script_(std::move(script)), calls_(calls) {}
  std::string_view name() const override { return name_; }
  int max_backoff() const override { return max_backoff_; }
  NeighbourhoodOutcome apply(NeighbourhoodContext&) override {
    calls_.push_back(name_);
    if (next_ < script_.size()) return script_[next_++];
    NeighbourhoodOutcome none;
    none.work = 1;
    return none;
  }

 private:
  std::string name_;
  int max_backoff_;
  std::vector<NeighbourhoodOutcome> script_;
  std::size_t next_ = 0;
  std::vector<std::string>& calls_;
};

NeighbourhoodOutcome improved(long work) {
  NeighbourhoodOutcome o;
  o.improved = true;
  o.work = work;
  return o;
}

NeighbourhoodOutcome fruitless(long work) {
  NeighbourhoodOutcome o;
  o.work = work;
  return o;
}

// A two-node problem, folded, and the pieces a context refers to.
struct Fixture {
  Fixture() : folded(make_folded()), proposal(folded), incumbent(folded), penalty(folded.kernel.nodes.size()) {
    for (std::size_t u = 0; u < penalty.size(); ++u) penalty[u].assign(folded.kernel.nodes[u].size(), 0.0);
    order.resize(folded.kernel.nodes.size());
    for (std::size_t u = 0; u < order.size(); ++u) order[u] = static_cast<int>(u);
  }
  static FoldedProblem make_folded() {
    Problem p;
    p.name = "two";
    p.nodes = {{"a", {1, 2}, {1, 1}, 0, 2}, {"b", {2, 1}, {1, 1}, 0, 2}};
    p.edges = {{0, 1, {0, 3, 3, 0}}};
    p.usage_limit = 4;
    return fold_problem(p, std::nullopt);
  }
  NeighbourhoodContext context() {
    return {folded, proposal, incumbent, have, penalty, order, rng, std::nullopt,
            [](const Assignment&, bool) { return false; }};
  }
  FoldedProblem folded;
  LocalSearch proposal;
  LocalSearch incumbent;
  bool have = false;
  std::vector<std::vector<double>> penalty;
  std::vector<int> order;
  std::mt19937_64 rng{1};
};

TEST_CASE("neighbourhood_portfolio_RunsEveryRoundMovesFirstThenTheOthersByTheirRecord") {
  Fixture f;
  std::vector<std::string> calls;
  std::vector<std::unique_ptr<Neighbourhood>> all;
  all.push_back(std::make_unique<Scripted>("slow", 31, std::vector{improved(100)}, calls));
  all.push_back(std::make_unique<Scripted>("core", 0, std::vector<NeighbourhoodOutcome>{}, calls));
  all.push_back(std::make_unique<Scripted>("fast", 31, std::vector{improved(1)}, calls));
  NeighbourhoodPortfolio portfolio(std::move(all));
  auto ctx = f.context();
  portfolio.round(ctx);  // no records yet: registration order among the optional ones
  CHECK(calls == std::vector<std::string>{"core", "slow", "fast"});
  calls.clear();
  portfolio.round(ctx);  // both improved once; "fast" did it with less work
  CHECK(calls == std::vector<std::string>{"core", "fast", "slow"});
  CHECK(portfolio.records()[0].improvements == 1);
  CHECK(portfolio.records()[2].work == 1 + 1);
}

TEST_CASE("neighbourhood_portfolio_BacksOffAFruitlessMoveByDoublingUpToItsCap") {
  Fixture f;
  std::vector<std::string> calls;
  std::vector<std::unique_ptr<Neighbourhood>> all;
  all.push_back(std::make_unique<Scripted>("region", 3, std::vector<NeighbourhoodOutcome>{}, calls));
  NeighbourhoodPortfolio portfolio(std::move(all));
  auto ctx = f.context();
  std::vector<int> ran;  // rounds in which it ran
  for (int round = 0; round < 16; ++round) {
    calls.clear();
    portfolio.round(ctx);
    if (!calls.empty()) ran.push_back(round);
  }
  // Fruitless each time: skip 1, then 3 (the cap), then 3 again.
  CHECK(ran == std::vector<int>{0, 2, 6, 10, 14});
}

TEST_CASE("neighbourhood_portfolio_AnImprovementEndsTheBackoffAndASkipLeavesTheRecord") {
  Fixture f;
  std::vector<std::string> calls;
  NeighbourhoodOutcome skipped;
  skipped.skipped = true;
  std::vector<std::unique_ptr<Neighbourhood>> all;
  all.push_back(std::make_unique<Scripted>("region", 31, std::vector{skipped, fruitless(2), improved(2)}, calls));
  NeighbourhoodPortfolio portfolio(std::move(all));
  auto ctx = f.context();
  portfolio.round(ctx);  // skipped: nothing recorded, no wait
  CHECK(portfolio.records()[0].applications == 0);
  CHECK(portfolio.records()[0].wait == 0);
  portfolio.round(ctx);  // fruitless: waits one round
  CHECK(portfolio.records()[0].wait == 1);
  portfolio.round(ctx);  // waited
  portfolio.round(ctx);  // improved: runs again next round
  CHECK(portfolio.records()[0].improvements == 1);
  CHECK(portfolio.records()[0].wait == 0);
  CHECK(calls.size() == 3);
}

TEST_CASE("neighbourhood_portfolio_AProofEndsTheRound") {
  Fixture f;
  std::vector<std::string> calls;
  NeighbourhoodOutcome proof;
  proof.proven = true;
  proof.proven_cost = 7;
  std::vector<std::unique_ptr<Neighbourhood>> all;
  all.push_back(std::make_unique<Scripted>("proves", 0, std::vector{proof}, calls));
  all.push_back(std::make_unique<Scripted>("after", 0, std::vector<NeighbourhoodOutcome>{}, calls));
  NeighbourhoodPortfolio portfolio(std::move(all));
  auto ctx = f.context();
  const NeighbourhoodOutcome out = portfolio.round(ctx);
  CHECK(out.proven);
  CHECK(out.proven_cost == 7);
  CHECK(calls == std::vector<std::string>{"proves"});
}

TEST_CASE("make_neighbourhoods_RegistersRepairThenRegionsUnlessRegionsAreOff") {
  auto all = make_neighbourhoods({4, 4});
  REQUIRE(all.size() == 3);
  CHECK(all[0]->name() == "repair-polish");
  CHECK(all[0]->max_backoff() == 0);
  CHECK(all[1]->name() == "z3-region");
  CHECK(all[1]->max_backoff() == 31);
  CHECK(all[2]->name() == "bnb-region");
  CHECK(all[2]->max_backoff() == 31);
  auto without = make_neighbourhoods({0, 0});
  REQUIRE(without.size() == 1);
  CHECK(without[0]->name() == "repair-polish");
  auto bnb_only = make_neighbourhoods({0, 2});
  REQUIRE(bnb_only.size() == 2);
  CHECK(bnb_only[1]->name() == "bnb-region");
}

TEST_CASE("bnb_region_SitsOutItsWarmUpThenImprovesTheIncumbentAndGrowsItsRegionLeavingTheSearchStream") {
  Fixture f;
  const Problem& kernel = f.folded.kernel;
  REQUIRE(kernel.nodes.size() == 2);
  // The dearest and the cheapest kernel assignments, by enumeration.
  Assignment worst, best;
  int64_t worst_cost = -1, best_cost = kForbidden;
  for (int a = 0; a < kernel.nodes[0].size(); ++a) {
    for (int b = 0; b < kernel.nodes[1].size(); ++b) {
      const int64_t c = cost_without_usage(kernel, {a, b});
      if (c >= kForbidden) continue;
      if (c > worst_cost) worst_cost = c, worst = {a, b};
      if (c < best_cost) best_cost = c, best = {a, b};
    }
  }
  REQUIRE(worst_cost > best_cost);
  f.incumbent.set(worst);
  f.have = true;
  int offers = 0;
  NeighbourhoodContext ctx{f.folded, f.proposal, f.incumbent, f.have, f.penalty, f.order, f.rng, std::nullopt,
                           [&](const Assignment&, bool) { return ++offers > 0; }};
  BnbNeighbourhood bnb(1, 1);
  for (long k = 0; k < kBnbWarmUp; ++k) CHECK(bnb.apply(ctx).skipped);
  CHECK(f.incumbent.cost() == worst_cost);
  std::mt19937_64 search_stream = f.rng;
  const NeighbourhoodOutcome out = bnb.apply(ctx);
  CHECK_FALSE(out.skipped);
  // Its regions come from a stream of its own: the search's stream is
  // where it was, so the priced proposals after it are those without it.
  CHECK(f.rng == search_stream);
  CHECK(out.improved);
  CHECK(offers == 1);
  CHECK(f.incumbent.cost() == best_cost);
  CHECK(bnb.region_size() > 16);  // the whole two-node kernel was searched to the end
}

}  // namespace
}  // namespace shardsynth::synth
