#pragma once

#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

namespace ebb {

// Escapes a string for the inside of a JSON string literal: quote and
// backslash get a backslash, bytes below 0x20 become \u00XX. Other bytes pass
// as they are (UTF-8 stays UTF-8).
std::string jsonEscape(std::string_view in);

// `in` as a JSON string literal, quotes included.
std::string jsonQuote(std::string_view in);

// Builds one flat JSON object, fields in the order added, no spaces:
//   JsonObject().add("a", 1).add("b", "x\"y").str()  ==  {"a":1,"b":"x\"y"}
// Numbers print as fmt's "{}" (integers) or with a fixed number of decimals;
// addRaw() takes text that is already JSON (an array, a nested object).
class JsonObject {
 public:
  JsonObject& add(std::string_view key, std::string_view value);
  JsonObject& add(std::string_view key, const char* value) {
    return add(key, std::string_view(value));
  }
  JsonObject& add(std::string_view key, const std::string& value) {
    return add(key, std::string_view(value));
  }
  template <std::integral T>
  JsonObject& add(std::string_view key, T value) {
    if constexpr (std::is_same_v<T, bool>) {
      return addRaw(key, value ? "true" : "false");
    } else if constexpr (std::is_signed_v<T>) {
      return addInt(key, static_cast<std::int64_t>(value));
    } else {
      return addUint(key, static_cast<std::uint64_t>(value));
    }
  }
  JsonObject& addFixed(std::string_view key, double value, int decimals);
  JsonObject& addRaw(std::string_view key, std::string_view json);
  // The object, closed. The builder is empty again afterwards.
  std::string str();

 private:
  JsonObject& addInt(std::string_view key, std::int64_t value);
  JsonObject& addUint(std::string_view key, std::uint64_t value);
  void key(std::string_view k);

  std::string text_;
};

}  // namespace ebb
