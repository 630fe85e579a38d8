#include "runtime/fp32_operands.hpp"

#include <deque>
#include <utility>

#include "runtime/half.hpp"

namespace shardsynth::runtime {
namespace {

// The fp32 copies of one call's 16-bit operands (a deque: pointers into it stay valid).
class Widened {
 public:
  // `t` itself when it holds fp32, else a widened copy held here.
  const Tensor* of(const Tensor* t) {
    if (!t || !t->holds_bits()) return t;
    return &copies_.emplace_back(widened(*t));
  }
  const Tensor& of(const Tensor& t) { return *of(&t); }

 private:
  std::deque<Tensor> copies_;
};

// Whether a kernel would read any 16-bit operand of `call` widened (the
// weight excepted when the kernel reads it by tiles).
bool widens(const KernelCall& call, bool weight_by_tiles) {
  for (const Tensor* t : call.inputs) {
    if (t && t->holds_bits()) return true;
  }
  for (const auto& [name, t] : call.params) {
    if (t && t->holds_bits() && !(weight_by_tiles && name == "weight")) return true;
  }
  return false;
}

// `call` with every 16-bit operand it widens replaced by its fp32 copy in `held`.
KernelCall fp32_call(const KernelCall& call, bool weight_by_tiles, Widened& held) {
  KernelCall out = call;
  for (const Tensor*& t : out.inputs) t = held.of(t);
  for (auto& [name, t] : out.params) {
    if (!(weight_by_tiles && name == "weight")) t = held.of(t);
  }
  return out;
}

}  // namespace

KernelFn with_fp32_operands(KernelFn kernel, bool weight_by_tiles) {
  return [kernel = std::move(kernel), weight_by_tiles](const KernelCall& call) {
    if (!widens(call, weight_by_tiles)) return kernel(call);
    Widened held;
    return kernel(fp32_call(call, weight_by_tiles, held));
  };
}

BackwardFn with_fp32_operands(BackwardFn kernel, bool weight_by_tiles) {
  return [kernel = std::move(kernel), weight_by_tiles](const BackwardCall& call) {
    if (!widens(call.forward, weight_by_tiles) && !call.output.holds_bits() && !call.grad_output.holds_bits()) {
      return kernel(call);
    }
    Widened held;
    const KernelCall forward = fp32_call(call.forward, weight_by_tiles, held);
    return kernel({forward, held.of(call.output), held.of(call.grad_output)});
  };
}

}  // namespace shardsynth::runtime
