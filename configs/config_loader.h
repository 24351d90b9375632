#pragma once

#include <string>
#include <string_view>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include "common/status.h"
#include "configs/proto/ebb.pb.h"  // generated

namespace ebb::config {

// Parses any text-format message into `msg`. Errors are E_PARSE "<source>:<line>:<col>: ...";
// an enum number the enum does not define is E_INVALID "<source>:<line>:<col>:
// <field.path>: unknown value N (expected one of A, B, C)", at any depth;
// so is a string that is not UTF-8 ("<field.path>: not valid UTF-8 (byte
// 0xFF at offset 0)": proto3 strings are, and a report would drop it).
Status parseTextMessage(const std::string& text, const std::string& sourceName,
                        google::protobuf::Message& msg);
// The offset of the first byte of `s` that breaks UTF-8, or npos.
std::size_t firstInvalidUtf8(std::string_view s);
// An enum's *_UNSPECIFIED value: "not given", not a choice.
bool isEnumPlaceholder(const google::protobuf::EnumValueDescriptor& v);
// The names an enum field takes, "A, B, C", without its UNSPECIFIED placeholder.
std::string enumValueNames(const google::protobuf::EnumDescriptor& e);
// Parses a text-format ebb config. Errors are E_PARSE "<source>:<line>:<col>: ...".
Result<Config> parseTextConfig(const std::string& text, const std::string& sourceName);
// Reads and parses a file; E_IO names the path when it cannot be read.
Result<Config> loadConfigFile(const std::string& path);
// Reads a whole file into a string (E_IO on failure).
Result<std::string> readFile(const std::string& path);

}  // namespace ebb::config
