#include "runtime/init.hpp"

#include <stdexcept>
#include <string>

namespace shardsynth::runtime {
namespace {

// splitmix64's finalizer: a bijective 64-bit mix.
uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// 64-bit FNV-1a of a name.
uint64_t fnv1a(const std::string& text) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

// numel of a shape, rejecting negative extents.
int64_t checked_numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t e : shape) {
    if (e < 0) throw std::invalid_argument("init: negative extent in shape");
    n *= e;
  }
  return n;
}

// Element-wise uniform fill in [-range, range).
Tensor uniform_fill(const std::string& name, const std::vector<int64_t>& shape, uint64_t seed, float range) {
  Tensor t{shape, {}};
  const int64_t n = checked_numel(shape);
  t.data.resize(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    t.data[i] = (2.0f * uniform01(seed, name, static_cast<uint64_t>(i)) - 1.0f) * range;
  }
  return t;
}

}  // namespace

float uniform01(uint64_t seed, const std::string& name, uint64_t index) {
  const uint64_t h = splitmix64(splitmix64(seed ^ splitmix64(fnv1a(name))) + index);
  return static_cast<float>(h >> 40) / static_cast<float>(1 << 24);
}

Tensor init_param(const std::string& full_name, const std::vector<int64_t>& shape, uint64_t seed) {
  return uniform_fill(full_name, shape, seed, kParamRange);
}

Tensor init_input(const ir::Node& placeholder, uint64_t seed, int64_t vocab_limit) {
  const std::vector<int64_t>& shape = placeholder.type.shape;
  if (placeholder.type.dtype != ir::DType::int64) return uniform_fill(placeholder.name, shape, seed, kInputRange);
  if (vocab_limit < 1 || vocab_limit > kMaxExactId) {
    throw std::invalid_argument("init_input '" + placeholder.name + "': vocab_limit " + std::to_string(vocab_limit) +
                                " not in [1, 2^24]");
  }
  Tensor t{shape, {}};
  const int64_t n = checked_numel(shape);
  t.data.resize(static_cast<std::size_t>(n));
  const bool arange = !shape.empty() && shape[0] == 1;
  const int64_t last = shape.empty() ? 1 : shape.back();
  for (int64_t i = 0; i < n; ++i) {
    // uniform01 < 1 has 24 bits, so the product in double stays below vocab_limit.
    const int64_t id = arange ? i % last
                              : static_cast<int64_t>(static_cast<double>(uniform01(seed, placeholder.name,
                                                                                   static_cast<uint64_t>(i))) *
                                                     static_cast<double>(vocab_limit));
    t.data[i] = static_cast<float>(id);
  }
  return t;
}

}  // namespace shardsynth::runtime
