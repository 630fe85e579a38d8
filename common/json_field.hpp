#pragma once
// Typed field access for the JSON readers, with one-line errors naming the
// document, the place and the field.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/error.hpp"

namespace shardsynth::common {

// Why json::parse rejected a text, for a one-line message: "byte N" for a
// syntax error; json::parse also throws out_of_range (not parse_error) for a
// number no double holds, such as 1E400.
inline std::string json_parse_failure(const nlohmann::json::exception& e) {
  if (const auto* p = dynamic_cast<const nlohmann::json::parse_error*>(&e)) return "byte " + std::to_string(p->byte);
  return "a number beyond the range of a double";
}

namespace detail {

template <class T>
constexpr bool kIsInteger = std::is_integral_v<T> && !std::is_same_v<T, bool>;

template <class T>
struct IsIntegerList : std::false_type {};
template <class U>
struct IsIntegerList<std::vector<U>> : std::bool_constant<kIsInteger<U>> {};

// Whether `v` is a JSON integer (not a float: converting a float beyond T's
// range is undefined behaviour) that T holds.
template <class T>
bool holds_integer(const nlohmann::json& v) {
  if (v.is_number_unsigned()) return std::in_range<T>(v.get<uint64_t>());
  if (v.is_number_integer()) return std::in_range<T>(v.get<int64_t>());
  return false;
}

template <class T>
std::string integer_range() {
  return "from " + std::to_string(std::numeric_limits<T>::min()) + " to " + std::to_string(std::numeric_limits<T>::max());
}

}  // namespace detail

// j[name] as a T. Throws InputError "<document>: <where> lacks field '<name>'"
// or "<document>: field '<name>' of <where> has the wrong type". Integer
// fields (and lists of integers) take JSON integers within T's range only:
// "... must be an integer from MIN to MAX".
template <class T>
T json_field(const nlohmann::json& j, const char* name, const std::string& where, const std::string& document) {
  if (!j.is_object() || !j.contains(name)) throw InputError(document + ": " + where + " lacks field '" + name + "'");
  const nlohmann::json& value = j.at(name);
  const std::string field = document + ": field '" + std::string(name) + "' of " + where;
  if constexpr (detail::kIsInteger<T>) {
    if (!detail::holds_integer<T>(value)) throw InputError(field + " must be an integer " + detail::integer_range<T>());
  } else if constexpr (detail::IsIntegerList<T>::value) {
    using U = typename T::value_type;
    if (!value.is_array() || !std::all_of(value.begin(), value.end(), detail::holds_integer<U>)) {
      throw InputError(field + " must be a list of integers " + detail::integer_range<U>());
    }
  }
  try {
    return value.get<T>();
  } catch (const nlohmann::json::exception&) {
    throw InputError(field + " has the wrong type");
  }
}

}  // namespace shardsynth::common
