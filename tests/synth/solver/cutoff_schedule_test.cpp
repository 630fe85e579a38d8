// The elimination's cutoff schedule: fractions of the gap before the labels'
// growth is known, then steps that double the labels, shortened to what the
// time left allows, and none when no worthwhile step fits.
#include <doctest/doctest.h>

#include <cmath>

#include "synth/solver/cutoff_schedule.hpp"

namespace shardsynth::synth {

TEST_CASE("CutoffSchedule_ClimbsByFractionsOfTheGapBeforeItKnowsTheLabelsGrowth") {
  CutoffSchedule schedule(1000, 1160);
  CHECK(schedule.next(std::nullopt) == 1010);  // 1/16 of the gap
  schedule.climbed({1010, 100, 1, 5});
  CHECK(schedule.next(std::nullopt) == 1015);  // 1.5 times as far
  schedule.climbed({1015, 100, 1, 5});         // no growth: still no rate
  CHECK(schedule.next(std::nullopt) == 1022);
  CHECK(schedule.next(1.0) == 1022);
  CHECK_FALSE(schedule.next(0.0).has_value());  // past the deadline
}

TEST_CASE("CutoffSchedule_StepsToTwiceTheLabelsOfTheLastCutoff") {
  // Labels double every 50 above 1,100: the next cutoff lies 50 higher.
  CutoffSchedule schedule(1000, 2000, {{1100, 1000, 2, 10}, {1150, 2000, 2, 40}});
  CHECK(schedule.next(std::nullopt) == 1200);
  CHECK(schedule.next(1e9) == 1200);
  // Never past the incumbent.
  CHECK(CutoffSchedule(1000, 1170, {{1100, 1000, 2, 10}, {1150, 2000, 2, 40}}).next(std::nullopt) == 1170);
}

TEST_CASE("CutoffSchedule_TakesTheRateOfTheLatestCutoffsWithTheSameRows") {
  // The last cutoff tracks a third row; the rate comes from the two before.
  CutoffSchedule schedule(1000, 5000, {{1100, 1000, 2, 10}, {1200, 4000, 2, 40}, {1200, 9000, 3, 100}});
  CHECK(schedule.next(std::nullopt) == 1250);  // labels double every 50
}

TEST_CASE("CutoffSchedule_ShortensTheStepToTheTimeLeftAndStopsWhenTooLittleIsLeft") {
  CutoffSchedule schedule(1000, 2000, {{1100, 1000, 2, 10}, {1150, 2000, 2, 100}});
  // 0.8 of 120 ms is 0.96 times the last elimination's 100 ms: at most sqrt(0.96) of its labels, too few.
  CHECK_FALSE(schedule.next(120.0).has_value());
  // 0.8 of 300 ms: sqrt(2.4) times the labels, a step of 50 * log2(sqrt(2.4)).
  CHECK(schedule.next(300.0) == 1150 + std::llround(50 * std::log2(std::sqrt(2.4))));
}

}  // namespace shardsynth::synth
