#include "ir/sharding_rule.hpp"

#include <algorithm>
#include <optional>

#include "ir/error.hpp"
#include "ir/tensor.hpp"

namespace shardsynth::ir {
namespace {

// One parsed operand: explicit dims (each a list of letters) around an optional ellipsis.
struct TermDims {
  std::vector<std::string> before;  // dims written before "..."
  std::vector<std::string> after;   // dims written after "..." (all dims when there is none)
  bool ellipsis = false;            // whether "..." occurs
};

TermDims parse_term(std::string_view term, std::string_view equation) {
  auto fail = [&](const std::string& why) -> InputError {
    return InputError("bad sharding equation '" + std::string(equation) + "': " + why);
  };
  TermDims dims;
  std::vector<std::string>* out = &dims.after;
  std::vector<std::string> head;
  for (std::size_t i = 0; i < term.size();) {
    if (term.substr(i, 3) == "...") {
      if (dims.ellipsis) throw fail("two ellipses in one operand");
      dims.ellipsis = true;
      dims.before = std::move(dims.after);
      dims.after.clear();
      i += 3;
    } else if (term[i] == '(') {
      std::size_t close = term.find(')', i);
      if (close == std::string_view::npos || close == i + 1) throw fail("unbalanced or empty ( )");
      out->emplace_back(term.substr(i + 1, close - i - 1));
      i = close + 1;
    } else if ((term[i] >= 'a' && term[i] <= 'z') || (term[i] >= 'A' && term[i] <= 'Z')) {
      out->emplace_back(1, term[i]);
      ++i;
    } else {
      throw fail("unexpected '" + std::string(1, term[i]) + "'");
    }
  }
  return dims;
}

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    std::size_t end = text.find(sep, start);
    parts.push_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

class RuleBuilder {
 public:
  RuleBuilder(std::string_view equation, const std::map<char, FactorKind>& kinds, const std::map<char, int64_t>& sizes)
      : equation_(equation), kinds_(kinds), sizes_(sizes) {}

  std::vector<DimFactors> bind(const TermDims& term, const std::vector<int64_t>& shape, int ellipsis_width,
                               const std::vector<int64_t>& slot_extent) {
    const int explicit_dims = static_cast<int>(term.before.size() + term.after.size());
    const int rank = static_cast<int>(shape.size());
    const int ellipsis_dims = rank - explicit_dims;
    if (ellipsis_dims < 0 || (!term.ellipsis && ellipsis_dims != 0)) {
      throw InputError("sharding equation '" + equation_ + "' does not fit a tensor of shape " + shape_string(shape));
    }
    std::vector<DimFactors> dims;
    int d = 0;
    for (const auto& letters : term.before) dims.push_back(bind_dim(letters, shape[d++]));
    for (int e = 0; e < ellipsis_dims; ++e) {
      // Right-aligned: the last ellipsis dim of every operand is the same
      // factor, except that an extent-1 dim broadcast against a larger one
      // gets a factor of its own.
      const int slot = ellipsis_width - ellipsis_dims + e;
      std::string name = "e" + std::to_string(slot);
      if (shape[d] == 1 && slot_extent.at(slot) != 1) name += "_" + std::to_string(broadcasts_++);
      dims.push_back({factor(name, FactorKind::pass_through, shape[d++])});
    }
    for (const auto& letters : term.after) dims.push_back(bind_dim(letters, shape[d++]));
    return dims;
  }

  std::vector<Factor> take_factors() {
    std::vector<Factor> out;
    for (auto& f : factors_) {
      if (!f.size) {
        throw InputError("sharding equation '" + equation_ + "': the extent of factor '" + f.factor.name +
                         "' cannot be read off the shapes");
      }
      f.factor.size = *f.size;
      out.push_back(f.factor);
    }
    return out;
  }

 private:
  struct Pending {
    Factor factor;                // name and kind
    std::optional<int64_t> size;  // known extent
  };

  int factor(const std::string& name, FactorKind kind, std::optional<int64_t> size) {
    auto it = std::find_if(factors_.begin(), factors_.end(), [&](const Pending& f) { return f.factor.name == name; });
    if (it == factors_.end()) {
      factors_.push_back({Factor{name, 0, kind}, size});
      return static_cast<int>(factors_.size() - 1);
    }
    if (size && it->size && *size != *it->size) {
      throw InputError("sharding equation '" + equation_ + "': factor '" + name + "' has extent " +
                       std::to_string(*it->size) + " in one tensor and " + std::to_string(*size) + " in another");
    }
    if (size) it->size = size;
    return static_cast<int>(it - factors_.begin());
  }

  DimFactors bind_dim(const std::string& letters, int64_t extent) {
    DimFactors ids;
    int64_t known = 1;
    int unknown = -1;
    for (char c : letters) {
      auto kind_it = kinds_.find(c);
      FactorKind kind = kind_it == kinds_.end() ? FactorKind::pass_through : kind_it->second;
      std::optional<int64_t> size;
      if (letters.size() == 1) {
        size = extent;
      } else if (auto s = sizes_.find(c); s != sizes_.end()) {
        size = s->second;
      }
      int id = factor(std::string(1, c), kind, size);
      ids.push_back(id);
      if (factors_[id].size) {
        known *= *factors_[id].size;
      } else if (unknown < 0) {
        unknown = id;
      } else {
        throw InputError("sharding equation '" + equation_ + "': dim (" + letters + ") has two factors of unknown extent");
      }
    }
    if (unknown >= 0) {
      if (known == 0 || extent % known != 0) {
        throw InputError("sharding equation '" + equation_ + "': dim (" + letters + ") of extent " +
                         std::to_string(extent) + " does not split into its factors");
      }
      factors_[unknown].size = extent / known;
    } else if (known != extent) {
      throw InputError("sharding equation '" + equation_ + "': dim (" + letters + ") has extent " +
                       std::to_string(extent) + " but its factors multiply to " + std::to_string(known));
    }
    return ids;
  }

  std::string equation_;
  const std::map<char, FactorKind>& kinds_;
  const std::map<char, int64_t>& sizes_;
  std::vector<Pending> factors_;
  int broadcasts_ = 0;  // broadcast factors made so far
};

}  // namespace

ShardingRule make_rule(std::string_view equation, const std::map<char, FactorKind>& kinds,
                       const std::vector<std::vector<int64_t>>& operand_shapes, const std::vector<int64_t>& result_shape,
                       const std::map<char, int64_t>& sizes) {
  const std::size_t arrow = equation.find("->");
  if (arrow == std::string_view::npos) {
    throw InputError("bad sharding equation '" + std::string(equation) + "': missing ->");
  }
  auto operand_terms = split(equation.substr(0, arrow), ',');
  if (operand_terms.size() != operand_shapes.size()) {
    throw InputError("sharding equation '" + std::string(equation) + "' has " + std::to_string(operand_terms.size()) +
                     " operands but the op has " + std::to_string(operand_shapes.size()));
  }
  std::vector<TermDims> terms;
  for (auto term : operand_terms) terms.push_back(parse_term(term, equation));
  TermDims result_term = parse_term(equation.substr(arrow + 2), equation);

  // The widest ellipsis decides how many ellipsis factors exist.
  int width = 0;
  auto widen = [&](const TermDims& t, const std::vector<int64_t>& shape) {
    if (t.ellipsis) width = std::max(width, static_cast<int>(shape.size() - t.before.size() - t.after.size()));
  };
  for (std::size_t i = 0; i < terms.size(); ++i) widen(terms[i], operand_shapes[i]);
  widen(result_term, result_shape);

  // Single-letter dims give their factor's extent; read them all first so a
  // grouped dim may come before the dim that sizes its factors.
  std::map<char, int64_t> known = sizes;
  auto learn = [&](const TermDims& t, const std::vector<int64_t>& shape) {
    const std::size_t after_start = shape.size() >= t.after.size() ? shape.size() - t.after.size() : 0;
    for (std::size_t i = 0; i < t.before.size() && i < shape.size(); ++i) {
      if (t.before[i].size() == 1) known.emplace(t.before[i][0], shape[i]);
    }
    for (std::size_t i = 0; i < t.after.size() && after_start + i < shape.size(); ++i) {
      if (t.after[i].size() == 1) known.emplace(t.after[i][0], shape[after_start + i]);
    }
  };
  for (std::size_t i = 0; i < terms.size(); ++i) learn(terms[i], operand_shapes[i]);
  learn(result_term, result_shape);

  // Largest extent at each ellipsis slot, to tell broadcast dims apart.
  std::vector<int64_t> slot_extent(width, 1);
  auto widest = [&](const TermDims& t, const std::vector<int64_t>& shape) {
    if (!t.ellipsis) return;
    const int n = static_cast<int>(shape.size() - t.before.size() - t.after.size());
    for (int e = 0; e < n; ++e) {
      auto& slot = slot_extent[width - n + e];
      slot = std::max(slot, shape[t.before.size() + e]);
    }
  };
  for (std::size_t i = 0; i < terms.size(); ++i) widest(terms[i], operand_shapes[i]);
  widest(result_term, result_shape);

  RuleBuilder builder(equation, kinds, known);
  ShardingRule rule;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    rule.operands.push_back(builder.bind(terms[i], operand_shapes[i], width, slot_extent));
  }
  rule.result = builder.bind(result_term, result_shape, width, slot_extent);
  rule.factors = builder.take_factors();
  return rule;
}

std::string_view factor_kind_name(FactorKind kind) {
  switch (kind) {
    case FactorKind::pass_through: return "pass_through";
    case FactorKind::reduction: return "reduction";
    case FactorKind::needs_replication: return "needs_replication";
  }
  return "?";
}

std::string to_string(const ShardingRule& rule) {
  auto tensor_text = [&](const std::vector<DimFactors>& dims) {
    std::string text = "[";
    for (std::size_t d = 0; d < dims.size(); ++d) {
      if (d > 0) text += ", ";
      for (std::size_t k = 0; k < dims[d].size(); ++k) {
        if (k > 0) text += "*";
        text += rule.factors[dims[d][k]].name;
      }
    }
    return text + "]";
  };
  std::string text = "(";
  for (std::size_t i = 0; i < rule.operands.size(); ++i) {
    if (i > 0) text += ", ";
    text += tensor_text(rule.operands[i]);
  }
  text += ")->(" + tensor_text(rule.result) + ") {";
  for (std::size_t f = 0; f < rule.factors.size(); ++f) {
    if (f > 0) text += ", ";
    text += rule.factors[f].name + "=" + std::to_string(rule.factors[f].size);
  }
  text += "}";
  for (FactorKind kind : {FactorKind::reduction, FactorKind::needs_replication}) {
    std::string names;
    for (const auto& f : rule.factors) {
      if (f.kind == kind) names += (names.empty() ? "" : ", ") + f.name;
    }
    if (!names.empty()) text += " " + std::string(factor_kind_name(kind)) + "={" + names + "}";
  }
  return text;
}

}  // namespace shardsynth::ir
