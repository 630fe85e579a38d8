#pragma once
// CLI11 checks for numeric flags, shared by the `synth` and `shard-run`
// commands. CLI11's own NonNegativeNumber/PositiveNumber print the whole
// double range on failure; these name the offending value in a short line:
//   synth: error: --time-limit: '-1' must be 0 or more
// Header-only on purpose: only binaries include it, so the ir library itself
// does not depend on CLI11.
#include <cmath>
#include <string>

#include <CLI/CLI.hpp>

namespace shardsynth::ir {

namespace detail {

// A check that `text` is a finite number at least `min` (above it when `strict`).
inline CLI::Validator number_check(double min, bool strict, const std::string& bound) {
  return CLI::Validator(
      [min, strict, bound](std::string& text) -> std::string {
        double value = 0;
        if (!CLI::detail::lexical_cast(text, value) || !std::isfinite(value)) return "'" + text + "' is not a number";
        if (strict ? value > min : value >= min) return "";
        return "'" + text + "' must be " + bound;
      },
      strict ? "NUMBER > 0" : "NUMBER >= 0");
}

}  // namespace detail

// A finite number >= 0.
inline CLI::Validator non_negative_number() { return detail::number_check(0, false, "0 or more"); }

// A finite number > 0.
inline CLI::Validator positive_number() { return detail::number_check(0, true, "above 0"); }

}  // namespace shardsynth::ir
