#include "common/json.h"

#include <fmt/format.h>

namespace ebb {

std::string jsonEscape(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  for (char c : in) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
    } else {
      out += c;
    }
  }
  return out;
}

std::string jsonQuote(std::string_view in) {
  return '"' + jsonEscape(in) + '"';
}

void JsonObject::key(std::string_view k) {
  text_ += text_.empty() ? '{' : ',';
  text_ += jsonQuote(k);
  text_ += ':';
}

JsonObject& JsonObject::add(std::string_view k, std::string_view value) {
  key(k);
  text_ += jsonQuote(value);
  return *this;
}

JsonObject& JsonObject::addInt(std::string_view k, std::int64_t value) {
  key(k);
  text_ += fmt::format("{}", value);
  return *this;
}

JsonObject& JsonObject::addUint(std::string_view k, std::uint64_t value) {
  key(k);
  text_ += fmt::format("{}", value);
  return *this;
}

JsonObject& JsonObject::addFixed(std::string_view k, double value, int decimals) {
  key(k);
  text_ += fmt::format("{:.{}f}", value, decimals);
  return *this;
}

JsonObject& JsonObject::addRaw(std::string_view k, std::string_view json) {
  key(k);
  text_ += json;
  return *this;
}

std::string JsonObject::str() {
  std::string out = text_.empty() ? std::string("{}") : std::move(text_) + '}';
  text_.clear();
  return out;
}

}  // namespace ebb
