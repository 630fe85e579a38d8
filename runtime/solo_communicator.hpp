#pragma once
// The communicator of a one-device mesh: every group has one member, so each
// collective hands back its input. The unsharded reference of a training run
// (runtime/training.hpp) runs the sharded code on it.
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/communicator.hpp"

namespace shardsynth::runtime {

class SoloCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::vector<int> coords() const override { return {0}; }
  std::vector<int64_t> mesh_shape() const override { return {1}; }
  Tensor all_gather(const Tensor& t, int, int, int64_t) override { return t; }
  Tensor reduce_scatter(const Tensor& t, int, int, int64_t) override { return t; }
  Tensor all_reduce(const Tensor& t, int) override { return t; }
  Tensor all_to_all(const Tensor& t, int, int, int, int64_t, int64_t) override { return t; }
  void send(const Tensor&, int) override { throw std::logic_error("a one-device mesh has no peer to send to"); }
  Tensor recv(const std::vector<int64_t>&, int) override { throw std::logic_error("a one-device mesh has no peer"); }
  void barrier() override {}
  bool any_rank(bool flag) override { return flag; }
  [[noreturn]] void abort(const std::string& message) override { throw std::runtime_error(message); }
};

}  // namespace shardsynth::runtime
