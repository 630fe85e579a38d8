#include "runtime/memory_check.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <mpi.h>

namespace shardsynth::runtime {
namespace {

// peak_step, params, grads, optimizer, activations, planned transient, unplanned transient at the peak, unplanned
// transient max
constexpr int kFields = 8;

struct Row {
  const char* name;  // the category as printed and named in a mismatch
  int64_t predicted;  // bytes the schedule predicts
  int64_t measured;   // bytes the rank held at its peak
};

std::vector<Row> rows(const ir::ScheduleMemory& p, const MemoryMeasured& m) {
  return {{"params", p.params, m.at_peak.params},
          {"grads", p.grads, m.at_peak.grads},
          {"optimizer", p.optimizer, m.at_peak.optimizer},
          {"activations", p.activations, m.at_peak.activations},
          {"transient", p.transient, m.at_peak.transient},
          {"peak", p.peak, m.at_peak.total()}};
}

}  // namespace

std::vector<MemoryMeasured> gather_measured(const MemoryMeasured& mine) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int64_t send[kFields] = {mine.peak_step,          mine.at_peak.params,      mine.at_peak.grads,
                                 mine.at_peak.optimizer,   mine.at_peak.activations, mine.at_peak.transient,
                                 mine.transient_at_peak,   mine.transient_max};
  std::vector<int64_t> all(rank == 0 ? static_cast<std::size_t>(size) * kFields : 0);
  MPI_Gather(send, kFields, MPI_INT64_T, all.data(), kFields, MPI_INT64_T, 0, MPI_COMM_WORLD);
  std::vector<MemoryMeasured> out;
  for (int r = 0; rank == 0 && r < size; ++r) {
    const int64_t* f = &all[static_cast<std::size_t>(r) * kFields];
    MemoryMeasured m;
    m.peak_step = f[0];
    m.at_peak = {f[1], f[2], f[3], f[4], f[5]};
    m.transient_at_peak = f[6];
    m.transient_max = f[7];
    if (r == 0) {
      m.peak_at = mine.peak_at;
      m.transient_kinds = mine.transient_kinds;
    }
    out.push_back(m);
  }
  return out;
}

std::string memory_mismatch(const ir::ScheduleMemory& predicted, const std::vector<MemoryMeasured>& ranks, bool adam) {
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    for (const Row& row : rows(predicted, ranks[r])) {
      if (!adam && std::string(row.name) == "optimizer") continue;
      const int64_t want = !adam && std::string(row.name) == "peak" ? predicted.peak - predicted.optimizer : row.predicted;
      if (row.measured == want) continue;
      return "memory: rank " + std::to_string(r) + ": " + row.name + " measured " + std::to_string(row.measured) +
             " bytes at its peak, predicted " + std::to_string(want) + " bytes";
    }
  }
  return "";
}

void print_memory_table(const ir::ScheduleMemory& predicted, const std::vector<MemoryMeasured>& ranks,
                        const std::vector<std::string>& steps) {
  std::printf("%-22s %12s %12s %12s %12s %12s %12s %12s  %s\n", "memory (bytes/device)", "params", "grads", "optimizer",
              "activations", "transient", "peak", "unplanned", "peak at");
  std::printf("%-22s %12lld %12lld %12lld %12lld %12lld %12lld %12s  step %lld, %s\n", "predicted",
              static_cast<long long>(predicted.params), static_cast<long long>(predicted.grads),
              static_cast<long long>(predicted.optimizer), static_cast<long long>(predicted.activations),
              static_cast<long long>(predicted.transient), static_cast<long long>(predicted.peak), "-",
              static_cast<long long>(predicted.peak_step), predicted.peak_at.c_str());
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const MemoryMeasured& m = ranks[r];
    const std::string label = "rank " + std::to_string(r) + " measured";
    const std::string at = m.peak_step >= 0 && m.peak_step < static_cast<int64_t>(steps.size()) ? steps[m.peak_step] : "";
    std::printf("%-22s %12lld %12lld %12lld %12lld %12lld %12lld %12lld  step %lld, %s\n", label.c_str(),
                static_cast<long long>(m.at_peak.params), static_cast<long long>(m.at_peak.grads),
                static_cast<long long>(m.at_peak.optimizer), static_cast<long long>(m.at_peak.activations),
                static_cast<long long>(m.at_peak.transient), static_cast<long long>(m.at_peak.total()),
                static_cast<long long>(m.transient_at_peak), static_cast<long long>(m.peak_step), at.c_str());
  }
  int64_t most = 0;
  for (const auto& m : ranks) most = std::max(most, m.transient_max);
  std::printf("(planned tensors held and freed as planned, transient: a parameter's gathered copy around its uses; "
              "unplanned: resharded operands, activation gradients, scratch and parameter copies the plan does not list, "
              "up to %lld bytes at any step: measured, not compared, the model counts none)\n",
              static_cast<long long>(most));
  std::string kinds;
  for (const auto& [what, bytes] : ranks.empty() ? std::map<std::string, int64_t>{} : ranks[0].transient_kinds) {
    if (bytes > 0) kinds += (kinds.empty() ? "" : ", ") + what + " " + std::to_string(bytes);
  }
  if (!kinds.empty()) std::printf("(rank 0's unplanned transient bytes at its peak: %s)\n", kinds.c_str());
}

int report_memory(const ir::ScheduleMemory& predicted, const std::vector<MemoryMeasured>& ranks,
                  const std::vector<std::string>& steps, bool check, bool adam) {
  if (ranks.empty()) {
    std::printf("memory: the schedule's figures list no planned tensors (synth --memory-report writes them): not measured\n");
    return 0;
  }
  print_memory_table(predicted, ranks, steps);
  if (!adam) std::printf("(the model prices Adam's state; with sgd the optimizer state is not compared)\n");
  if (!check) return 0;
  const std::string mismatch = memory_mismatch(predicted, ranks, adam);
  if (!mismatch.empty()) {
    std::printf("check: %s: FAILED\n", mismatch.c_str());
    return 1;
  }
  std::printf("check: memory of every rank at its peak, by category, as predicted: OK\n");
  return 0;
}

}  // namespace shardsynth::runtime
