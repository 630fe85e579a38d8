#include "runtime/cli/shard_run_plan.hpp"

#include <exception>
#include <vector>

#include <nlohmann/json.hpp>

#include "costs/cost_model.hpp"
#include "ir/error.hpp"
#include "ir/mesh.hpp"
#include "runtime/mpi_check.hpp"
#include "synth/stages/stages.hpp"

namespace shardsynth::runtime {

ir::StagedSchedule plan_in_process(const ir::Graph& graph, const PlanFlags& flags, MPI_Comm world) {
  int rank = 0;
  SHARDSYNTH_MPI_CHECK(MPI_Comm_rank(world, &rank));
  std::string text;  // the schedule's JSON, or the error message
  int failed = 0;
  if (rank == 0) {
    try {
      if (flags.mesh.empty()) throw ir::InputError("--stages needs --mesh (e.g. --mesh 4x2 --stages 4)");
      const ir::Mesh mesh = ir::parse_mesh(flags.mesh);
      const auto model = costs::make_cost_model(flags.cost_model);
      const synth::StageOptions options{flags.stages, synth::parse_stage_balance(flags.balance), flags.micro_batches};
      text = ir::to_json(synth::plan_stages(graph, mesh, *model, {}, options)).dump();
    } catch (const ir::InputError& e) {
      text = e.what();
      failed = 1;
    } catch (const std::exception& e) {  // solver failures and limits
      text = std::string("planning failed: ") + e.what();
      failed = 1;
    }
  }
  long long length = static_cast<long long>(text.size());
  SHARDSYNTH_MPI_CHECK(MPI_Bcast(&failed, 1, MPI_INT, 0, world));
  SHARDSYNTH_MPI_CHECK(MPI_Bcast(&length, 1, MPI_LONG_LONG, 0, world));
  std::vector<char> bytes(text.begin(), text.end());
  bytes.resize(static_cast<std::size_t>(length));
  SHARDSYNTH_MPI_CHECK(MPI_Bcast(bytes.data(), static_cast<int>(length), MPI_CHAR, 0, world));
  text.assign(bytes.begin(), bytes.end());
  if (failed) throw ir::InputError(text);
  return ir::staged_schedule_from_json(nlohmann::json::parse(text));
}

}  // namespace shardsynth::runtime
