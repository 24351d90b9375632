#include "configs/config_loader.h"

#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include "common/file_io.h"

namespace ebb::config {

namespace {

class CollectFirstError : public google::protobuf::io::ErrorCollector {
 public:
  explicit CollectFirstError(std::string source) : source_(std::move(source)) {}
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    if (first_.empty())
      first_ = fmt::format("{}:{}:{}: {}", source_, line + 1, column + 1, message);
  }
  void AddWarning(int, google::protobuf::io::ColumnNumber, const std::string&) override {}
  const std::string& first() const { return first_; }

 private:
  std::string source_;
  std::string first_;
};

}  // namespace

Result<std::string> readFile(const std::string& path) {
  if (Status s = checkReadableFile(path, "file"); !s.isOk()) return s;
  std::ifstream in(path, std::ios::binary);
  if (!in) return {ErrorCode::kIo, fmt::format("cannot open {}", path)};
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return {ErrorCode::kIo, fmt::format("error reading {}", path)};
  return ss.str();
}

Status parseTextMessage(const std::string& text, const std::string& sourceName,
                        google::protobuf::Message& msg) {
  google::protobuf::TextFormat::Parser parser;
  CollectFirstError errors(sourceName);
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(text, &msg)) {
    return {ErrorCode::kParse,
            errors.first().empty() ? sourceName + ": malformed config" : errors.first()};
  }
  return Status::ok();
}

Result<Config> parseTextConfig(const std::string& text, const std::string& sourceName) {
  Config cfg;
  if (Status s = parseTextMessage(text, sourceName, cfg); !s.isOk()) return s;
  return cfg;
}

Result<Config> loadConfigFile(const std::string& path) {
  Result<std::string> text = readFile(path);
  if (!text) return text.status();
  return parseTextConfig(*text, path);
}

}  // namespace ebb::config
