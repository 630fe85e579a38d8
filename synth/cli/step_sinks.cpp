#include "synth/cli/step_sinks.hpp"

#include "synth/report/iteration_table.hpp"
#include "synth/report/trace_replay.hpp"

namespace shardsynth::synth::cli {

StepSinks::StepSinks(std::shared_ptr<spdlog::logger> out, std::shared_ptr<spdlog::logger> log,
                     const std::string& trace_path, const nlohmann::json& trace_header, bool quiet)
    : out_(std::move(out)), log_(std::move(log)), progress_(ProgressLine::for_stderr(quiet)) {
  if (!trace_path.empty()) trace_.emplace(trace_path, trace_header);
}

void StepSinks::add(const Lowered& lowered, const Iteration& it) {
  progress_.clear();
  // The block `synth trace FILE --iter N` re-prints from the trace.
  std::string block = iteration_block(problem_labels(lowered), iteration_to_json(lowered, it), best_seen_);
  block.pop_back();
  out_->info("{}", block);
  log_->debug("solver call {}: {} below {}: {:.3f} ms (prepared in {:.3f} ms)", it.index, status_name(it.status),
              it.bound ? std::to_string(*it.bound) : "any", it.solver_ms, it.prepare_ms);
  if (it.status == CheckStatus::sat) best_seen_ = it.cost;
  if (trace_) trace_->add(lowered, it);
  progress_.update(it);
}

void StepSinks::finish() {
  progress_.clear();
  if (trace_) trace_->finish();
}

}  // namespace shardsynth::synth::cli
