#include "ir/schedule.hpp"

#include <utility>

#include "ir/error.hpp"
#include "ir/json_field.hpp"

namespace shardsynth::ir {

std::string category_name(MemoryCategory category) {
  switch (category) {
    case MemoryCategory::param: return "param";
    case MemoryCategory::grad: return "grad";
    case MemoryCategory::optimizer: return "optimizer";
    case MemoryCategory::activation: return "activation";
    case MemoryCategory::transient: return "transient";
  }
  return "activation";
}

MemoryCategory memory_category(const std::string& text) {
  for (auto c : {MemoryCategory::param, MemoryCategory::grad, MemoryCategory::optimizer, MemoryCategory::activation,
                 MemoryCategory::transient}) {
    if (category_name(c) == text) return c;
  }
  throw InputError("unknown category '" + text + "' (known: param, grad, optimizer, activation, transient)");
}

std::string to_text(const Directive& d) {
  std::string head = "sch[\"" + d.node + "\"]";
  if (d.kind == DirectiveKind::shard) {
    std::string text = head + ".shard(\"" + d.param + "\", dim=" + std::to_string(d.dim);
    if (d.blocks != 1) text += ", blocks=" + std::to_string(d.blocks);
    if (!d.axes.empty()) {
      text += ", axes=[";
      for (std::size_t i = 0; i < d.axes.size(); ++i) text += (i ? ", " : "") + std::to_string(d.axes[i]);
      text += "]";
    }
    return text + ")";
  }
  if (d.kind == DirectiveKind::checkpoint) return head + ".checkpoint()";
  std::string text = head + ".sync(mode=\"" + d.mode + "\", sync_op_or_fn=\"" + d.sync_op + "\"";
  if (d.arg >= 0) text += ", arg=" + std::to_string(d.arg);
  return text + ")";
}

std::string directives_text(const Schedule& schedule) {
  std::string text;
  for (const auto& d : schedule.directives) text += to_text(d) + "\n";
  return text;
}

nlohmann::json to_json(const Schedule& s) {
  nlohmann::json directives = nlohmann::json::array();
  for (const auto& d : s.directives) {
    nlohmann::json j{{"node", d.node}};
    if (d.kind == DirectiveKind::shard) {
      j["kind"] = "shard";
      j["param"] = d.param;
      j["dim"] = d.dim;
      if (d.blocks != 1) j["blocks"] = d.blocks;
      if (!d.axes.empty()) j["axes"] = d.axes;
    } else if (d.kind == DirectiveKind::checkpoint) {
      j["kind"] = "checkpoint";
    } else {
      j["kind"] = "sync";
      j["mode"] = d.mode;
      j["sync_op_or_fn"] = d.sync_op;
      if (d.arg >= 0) j["arg"] = d.arg;
    }
    directives.push_back(std::move(j));
  }
  nlohmann::json specs = nlohmann::json::array();
  for (const auto& t : s.specs) specs.push_back({{"tensor", t.tensor}, {"spec", t.spec}});
  nlohmann::json out = {{"format", "shardsynth.schedule/1"},
                         {"mesh", s.mesh},
                         {"cost_model", s.cost_model},
                         {"mode", s.mode},
                         {"cost", s.cost},
                         {"proven_optimal", s.proven_optimal},
                         {"directives", std::move(directives)},
                         {"specs", std::move(specs)}};
  if (s.memory) {
    const ScheduleMemory& m = *s.memory;
    out["memory"] = {{"params", m.params},           {"grads", m.grads},         {"optimizer", m.optimizer},
                     {"activations", m.activations}, {"transient", m.transient}, {"peak", m.peak},
                     {"peak_step", m.peak_step},     {"peak_at", m.peak_at}};
    if (!m.zero_stages.empty()) out["memory"]["zero_stages"] = m.zero_stages;
    if (m.recomputed_ops > 0) {
      out["memory"]["recomputed_ops"] = m.recomputed_ops;
      out["memory"]["recomputed"] = m.recomputed;
    }
    if (!m.tensors.empty()) {
      auto tensors = nlohmann::json::array();
      for (const PlannedTensor& t : m.tensors) {
        auto live = nlohmann::json::array();
        for (const LiveSpan& span : t.live) live.push_back({span.from, span.to});
        tensors.push_back({{"name", t.name}, {"category", category_name(t.category)}, {"bytes", t.bytes}, {"live", live}});
      }
      out["memory"]["tensors"] = std::move(tensors);
    }
  }
  return out;
}

namespace {

template <class T>
T field(const nlohmann::json& j, const char* name, const std::string& where, const std::string& document) {
  return json_field<T>(j, name, where, document);
}

}  // namespace

Schedule schedule_from_json(const nlohmann::json& j, const std::string& document) {
  Schedule s;
  if (field<std::string>(j, "format", "the top level", document) != "shardsynth.schedule/1") {
    throw InputError(document + ": unsupported format '" + j.at("format").get<std::string>() + "'");
  }
  s.mesh = field<std::vector<int64_t>>(j, "mesh", "the top level", document);
  s.cost_model = field<std::string>(j, "cost_model", "the top level", document);
  s.cost = field<int64_t>(j, "cost", "the top level", document);
  // Files written before training plans ran have no mode: they were inference plans.
  if (j.contains("mode")) s.mode = field<std::string>(j, "mode", "the top level", document);
  if (s.mode != "inference" && s.mode != "training") {
    throw InputError(document + ": unknown mode '" + s.mode + "' (known: inference, training)");
  }
  s.proven_optimal = field<bool>(j, "proven_optimal", "the top level", document);
  const auto directives = field<std::vector<nlohmann::json>>(j, "directives", "the top level", document);
  for (std::size_t i = 0; i < directives.size(); ++i) {
    const auto& dj = directives[i];
    const std::string where = "directive " + std::to_string(i);
    Directive d;
    d.node = field<std::string>(dj, "node", where, document);
    const auto kind = field<std::string>(dj, "kind", where, document);
    if (kind == "shard") {
      d.kind = DirectiveKind::shard;
      d.param = field<std::string>(dj, "param", where, document);
      d.dim = field<int>(dj, "dim", where, document);
      if (dj.contains("blocks")) d.blocks = field<int64_t>(dj, "blocks", where, document);
      if (dj.contains("axes")) d.axes = field<std::vector<int>>(dj, "axes", where, document);
      if (d.blocks < 1) throw InputError(document + ": " + where + " has blocks " + std::to_string(d.blocks));
    } else if (kind == "sync") {
      d.kind = DirectiveKind::sync;
      d.mode = field<std::string>(dj, "mode", where, document);
      if (d.mode != "fwd_pre" && d.mode != "fwd_post") throw InputError(document + ": " + where + " has unknown mode '" + d.mode + "'");
      d.sync_op = field<std::string>(dj, "sync_op_or_fn", where, document);
      if (dj.contains("arg")) d.arg = field<int>(dj, "arg", where, document);
    } else if (kind == "checkpoint") {
      d.kind = DirectiveKind::checkpoint;
    } else {
      throw InputError(document + ": " + where + " has unknown kind '" + kind + "'");
    }
    s.directives.push_back(std::move(d));
  }
  for (const auto& tj : field<std::vector<nlohmann::json>>(j, "specs", "the top level", document)) {
    s.specs.push_back({field<std::string>(tj, "tensor", "a spec entry", document), field<std::string>(tj, "spec", "a spec entry", document)});
  }
  if (j.contains("memory")) {
    const auto mj = field<nlohmann::json>(j, "memory", "the top level", document);
    ScheduleMemory m;
    for (auto [name, value] : {std::pair{"params", &m.params}, {"grads", &m.grads}, {"optimizer", &m.optimizer},
                               {"activations", &m.activations}, {"transient", &m.transient}, {"peak", &m.peak},
                               {"peak_step", &m.peak_step}}) {
      *value = field<int64_t>(mj, name, "memory", document);
    }
    m.peak_at = field<std::string>(mj, "peak_at", "memory", document);
    if (mj.contains("zero_stages")) m.zero_stages = field<std::vector<int64_t>>(mj, "zero_stages", "memory", document);
    if (mj.contains("recomputed_ops")) {
      m.recomputed_ops = field<int64_t>(mj, "recomputed_ops", "memory", document);
      m.recomputed = field<int64_t>(mj, "recomputed", "memory", document);
    }
    if (mj.contains("tensors")) {
      for (const auto& tj : field<std::vector<nlohmann::json>>(mj, "tensors", "memory", document)) {
        PlannedTensor t;
        t.name = field<std::string>(tj, "name", "a memory tensor", document);
        try {
          t.category = memory_category(field<std::string>(tj, "category", "a memory tensor", document));
        } catch (const InputError& e) {
          throw InputError(document + ": memory tensor '" + t.name + "': " + e.what());
        }
        t.bytes = field<int64_t>(tj, "bytes", "a memory tensor", document);
        for (const auto& span : field<std::vector<std::vector<int64_t>>>(tj, "live", "a memory tensor", document)) {
          if (span.size() != 2 || span[0] > span[1]) {
            throw InputError(document + ": memory tensor '" + t.name + "': each live interval is [from, to] with from <= to");
          }
          t.live.push_back({span[0], span[1]});
        }
        m.tensors.push_back(std::move(t));
      }
    }
    s.memory = m;
  }
  return s;
}

}  // namespace shardsynth::ir
