// The runtime's memory ledger (runtime/memory_ledger.hpp): planned tensors
// are reserved when their interval starts, freed when it ends, and read or
// held outside it is a one-line error naming the tensor and the step.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "ir/schedule.hpp"
#include "runtime/memory_ledger.hpp"

using namespace shardsynth;

namespace {

runtime::MemoryLedger ledger() {
  using ir::MemoryCategory;
  std::vector<ir::PlannedTensor> planned = {
      {"w", MemoryCategory::param, 40, {{0, 4}}},
      {"a", MemoryCategory::activation, 100, {{0, 2}}},
      {"b", MemoryCategory::activation, 30, {{1, 2}, {3, 4}}},  // freed and held again (recomputed)
  };
  return runtime::MemoryLedger(planned, {"forward of a", "forward of b", "backward of b", "backward of a"},
                               [](const ir::PlannedTensor& t) { return t.bytes; });
}

}  // namespace

TEST_CASE("MemoryLedger_FreesAtTheEndOfEachInterval") {
  auto l = ledger();
  int freed_a = 0, freed_b = 0;
  l.begin(0);
  l.hold("a", 100, [&] { ++freed_a; });
  l.transient("scratch", 7);
  l.transient("scratch", 0);
  l.begin(1);
  l.read("a");
  l.hold("b", 32, [&] { ++freed_b; });  // holds 2 bytes more than planned: the measurement says so
  l.begin(2);
  CHECK(freed_a == 1);
  CHECK(freed_b == 1);
  l.begin(3);
  l.hold("b", 30);
  l.finish();
  CHECK(freed_b == 1);  // held at the end: the run's result
  const runtime::MemoryMeasured& m = l.measured();
  CHECK(m.peak_step == 1);
  CHECK(m.peak_at == "forward of b");
  CHECK(m.at_peak == runtime::MemoryBytes{40, 0, 0, 132});
  CHECK(m.transient_at_peak == 0);
  CHECK(m.transient_max == 7);
}

TEST_CASE("MemoryLedger_ReadOutsideTheIntervalNamesTensorAndStep") {
  auto l = ledger();
  l.begin(0);
  CHECK_THROWS_WITH_AS(l.read("b"),
                       "memory plan: tensor 'b' is read at time step 0 (forward of a), outside its planned interval",
                       std::runtime_error);
  l.begin(1);
  l.begin(2);
  CHECK_THROWS_WITH_AS(l.hold("a", 100), doctest::Contains("tensor 'a' is held at time step 2 (backward of b)"),
                       std::runtime_error);
  l.read("unplanned");  // not the plan's: passes
  CHECK_THROWS_AS(l.begin(4), std::logic_error);  // steps go one at a time
}
