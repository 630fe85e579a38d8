// End-to-end tests of `synth --pin/--forbid`: pinned plans, and conflicting
// pins named in the error.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "e2e/run_command.hpp"
#include "ir/schedule.hpp"

using namespace shardsynth::testing;

namespace {
const std::string kSynth = SHARDSYNTH_SYNTH_BIN;
}

TEST_CASE("synth_PinsGiveMegatronOnTheSeedMlp") {
  const auto r = run_command(kSynth + " mlp --cost-model slapo --quiet --pin fc1.weight=SR --pin fc2.weight=RS");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out ==
        "sch[\"fc1\"].shard(\"weight\", dim=0)\n"
        "sch[\"fc1\"].shard(\"bias\", dim=0)\n"
        "sch[\"fc2\"].shard(\"weight\", dim=1)\n"
        "sch[\"fc2\"].sync(mode=\"fwd_post\", sync_op_or_fn=\"RR+P->RR\")\n");
}

TEST_CASE("synth_InfeasiblePinsPrintTheConflictingPins") {
  const auto dir = scratch_dir("pins");
  const auto path = (dir / "plan.json").string();
  // 60 MB per device holds one replicated weight, not both; the bias pin is not part of the conflict.
  const auto r = run_command(kSynth + " mlp --memory 60000000 --pin fc1.weight=RR --pin fc1.bias=R --forbid output=SRR"
                             " --pin fc2.weight=RR --schedule " + path);
  CHECK(r.exit_code == 2);
  CHECK(r.err == "synth: error: pins conflict: fc1.weight=RR, fc2.weight=RR cannot hold together (2 of 4 pins)\n");
  CHECK_FALSE(std::filesystem::exists(path));

  const auto one = run_command(kSynth + " mlp --cost-model slapo --pin x=SR");
  CHECK(one.exit_code == 2);
  CHECK(one.err == "synth: error: pin x=SR cannot hold: no plan satisfies it (1 of 1 pins)\n");

  const auto bad = run_command(kSynth + " mlp --pin fc1.weight");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("'fc1.weight'") != std::string::npos);
  std::filesystem::remove_all(dir);
}
