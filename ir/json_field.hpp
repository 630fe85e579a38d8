#pragma once
// Typed field access for the JSON readers, with one-line errors naming the
// document, the place and the field.
#include <string>

#include <nlohmann/json.hpp>

#include "ir/error.hpp"

namespace shardsynth::ir {

// Why json::parse rejected a text, for a one-line message: "byte N" for a
// syntax error; json::parse also throws out_of_range (not parse_error) for a
// number no double holds, such as 1E400.
inline std::string json_parse_failure(const nlohmann::json::exception& e) {
  if (const auto* p = dynamic_cast<const nlohmann::json::parse_error*>(&e)) return "byte " + std::to_string(p->byte);
  return "a number beyond the range of a double";
}

// j[name] as a T. Throws InputError "<document>: <where> lacks field '<name>'"
// or "<document>: field '<name>' of <where> has the wrong type".
template <class T>
T json_field(const nlohmann::json& j, const char* name, const std::string& where, const std::string& document) {
  if (!j.is_object() || !j.contains(name)) throw InputError(document + ": " + where + " lacks field '" + name + "'");
  try {
    return j.at(name).get<T>();
  } catch (const nlohmann::json::exception&) {
    throw InputError(document + ": field '" + std::string(name) + "' of " + where + " has the wrong type");
  }
}

}  // namespace shardsynth::ir
