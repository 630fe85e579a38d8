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

bool reads_bits(const KernelCall& call) {
  for (const Tensor* t : call.inputs) {
    if (t && t->holds_bits()) return true;
  }
  for (const auto& [name, t] : call.params) {
    if (t && t->holds_bits()) return true;
  }
  return false;
}

// `call` with every 16-bit operand replaced by its fp32 copy in `held`.
KernelCall fp32_call(const KernelCall& call, Widened& held) {
  KernelCall out = call;
  for (const Tensor*& t : out.inputs) t = held.of(t);
  for (auto& [name, t] : out.params) t = held.of(t);
  return out;
}

}  // namespace

KernelFn with_fp32_operands(KernelFn kernel) {
  return [kernel = std::move(kernel)](const KernelCall& call) {
    if (!reads_bits(call)) return kernel(call);
    Widened held;
    return kernel(fp32_call(call, held));
  };
}

BackwardFn with_fp32_operands(BackwardFn kernel) {
  return [kernel = std::move(kernel)](const BackwardCall& call) {
    if (!reads_bits(call.forward) && !call.output.holds_bits() && !call.grad_output.holds_bits()) return kernel(call);
    Widened held;
    const KernelCall forward = fp32_call(call.forward, held);
    return kernel({forward, held.of(call.output), held.of(call.grad_output)});
  };
}

}  // namespace shardsynth::runtime
