#pragma once

#include <string>

#include <google/protobuf/message.h>

#include "common/status.h"
#include "configs/proto/ebb.pb.h"  // generated

namespace ebb::config {

// Parses any text-format message into `msg`. Errors are E_PARSE "<source>:<line>:<col>: ...".
Status parseTextMessage(const std::string& text, const std::string& sourceName,
                        google::protobuf::Message& msg);
// Parses a text-format ebb config. Errors are E_PARSE "<source>:<line>:<col>: ...".
Result<Config> parseTextConfig(const std::string& text, const std::string& sourceName);
// Reads and parses a file; E_IO names the path when it cannot be read.
Result<Config> loadConfigFile(const std::string& path);
// Reads a whole file into a string (E_IO on failure).
Result<std::string> readFile(const std::string& path);

}  // namespace ebb::config
