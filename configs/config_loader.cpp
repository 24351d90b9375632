#include "configs/config_loader.h"

#include <fstream>
#include <limits>
#include <sstream>
#include <vector>

#include <fmt/format.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/text_format.h>

#include "common/file_io.h"

namespace ebb::config {

// A proto3 string must be UTF-8 (serializing one that is not drops it: a
// report named "" with a libprotobuf error on stderr).
std::size_t firstInvalidUtf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t len = 0;
    std::uint32_t min = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      len = 2;
      min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      min = 0x10000;
    } else {
      return i;
    }
    if (i + len > s.size()) return i;
    std::uint32_t cp = c & (0x7F >> len);
    for (std::size_t k = 1; k < len; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if ((b & 0xC0) != 0x80) return i;
      cp = cp << 6 | (b & 0x3F);
    }
    // Overlong forms, UTF-16 surrogates and code points past U+10FFFF are not UTF-8.
    if (cp < min || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return i;
    i += len;
  }
  return std::string_view::npos;
}

namespace {

class CollectFirstError : public google::protobuf::io::ErrorCollector {
 public:
  explicit CollectFirstError(std::string source) : source_(std::move(source)) {}
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    if (!first_.empty()) return;
    // The parser quotes the offending token whole: cut a huge one short.
    constexpr std::size_t kMaxMessage = 240;
    const std::string shown =
        message.size() <= kMaxMessage ? message : message.substr(0, kMaxMessage) + "... (cut)";
    first_ = fmt::format("{}:{}:{}: {}", source_, line + 1, column + 1, shown);
  }
  void AddWarning(int, google::protobuf::io::ColumnNumber, const std::string&) override {}
  const std::string& first() const { return first_; }

 private:
  std::string source_;
  std::string first_;
};

// protobuf's text format reads 010 as octal 8 and 0x10 as 16; ebb's numbers
// are decimal everywhere (overrides and options read 010 as 10), so a whole
// number with a leading 0 is refused, naming it, rather than read two ways.
Status checkDecimalIntegers(const std::string& text, const std::string& sourceName) {
  if (text.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) return Status::ok();
  google::protobuf::io::ArrayInputStream in(text.data(), static_cast<int>(text.size()));
  CollectFirstError ignored(sourceName);  // the parser has reported syntax already
  google::protobuf::io::Tokenizer tok(&in, &ignored);
  tok.set_comment_style(google::protobuf::io::Tokenizer::SH_COMMENT_STYLE);
  while (tok.Next()) {
    const google::protobuf::io::Tokenizer::Token& t = tok.current();
    if (t.type == google::protobuf::io::Tokenizer::TYPE_INTEGER && t.text.size() > 1 &&
        t.text[0] == '0') {
      return {ErrorCode::kParse,
              fmt::format("{}:{}:{}: {}: numbers are decimal (write it without the leading 0; "
                          "protobuf's text format would read it as {})",
                          sourceName, t.line + 1, t.column + 1, t.text,
                          t.text[1] == 'x' || t.text[1] == 'X' ? "hexadecimal" : "octal")};
    }
  }
  return Status::ok();
}

// The key of map entry `entry`, as written in a path: name["key"] or name[3].
std::string mapKey(const google::protobuf::Message& entry) {
  const auto* key = entry.GetDescriptor()->map_key();
  const auto* r = entry.GetReflection();
  switch (key->cpp_type()) {
    case google::protobuf::FieldDescriptor::CPPTYPE_STRING:
      return fmt::format("\"{}\"", r->GetString(entry, key));
    case google::protobuf::FieldDescriptor::CPPTYPE_INT32:
      return std::to_string(r->GetInt32(entry, key));
    case google::protobuf::FieldDescriptor::CPPTYPE_INT64:
      return std::to_string(r->GetInt64(entry, key));
    case google::protobuf::FieldDescriptor::CPPTYPE_UINT32:
      return std::to_string(r->GetUInt32(entry, key));
    case google::protobuf::FieldDescriptor::CPPTYPE_UINT64:
      return std::to_string(r->GetUInt64(entry, key));
    case google::protobuf::FieldDescriptor::CPPTYPE_BOOL:
      return r->GetBool(entry, key) ? "true" : "false";
    default:
      return "?";
  }
}

// proto3 enums are open: the text parser keeps a number no value of the enum
// has (`policy: 42`), which every later switch would then take for something.
// Walks everything set in `msg`, nested messages, repeated and map fields
// included, and refuses the first such number, naming its place and path.
Status checkFieldValues(const google::protobuf::Message& msg, const std::string& path,
                        const google::protobuf::TextFormat::ParseInfoTree* tree,
                        const std::string& source) {
  using google::protobuf::FieldDescriptor;
  const auto* r = msg.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  r->ListFields(msg, &fields);
  for (const FieldDescriptor* f : fields) {
    const int n = f->is_repeated() ? r->FieldSize(msg, f) : 1;
    for (int i = 0; i < n; ++i) {
      const int index = f->is_repeated() ? i : -1;
      std::string where = path.empty() ? f->name() : path + "." + f->name();
      if (f->is_map()) {
        where += "[" + mapKey(r->GetRepeatedMessage(msg, f, i)) + "]";
      } else if (f->is_repeated()) {
        where += fmt::format("[{}]", i);
      }
      if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
        const auto& sub =
            f->is_repeated() ? r->GetRepeatedMessage(msg, f, i) : r->GetMessage(msg, f);
        const auto* subTree = tree ? tree->GetTreeForNested(f, index) : nullptr;
        if (Status s = checkFieldValues(sub, where, subTree, source); !s.isOk()) return s;
        continue;
      }
      const auto at = [&] {
        const auto loc =
            tree ? tree->GetLocation(f, index) : google::protobuf::TextFormat::ParseLocation();
        return loc.line >= 0 ? fmt::format("{}:{}:{}", source, loc.line + 1, loc.column + 1)
                             : source;
      };
      if (f->type() == FieldDescriptor::TYPE_STRING) {
        const std::string v =
            f->is_repeated() ? r->GetRepeatedString(msg, f, i) : r->GetString(msg, f);
        if (const std::size_t bad = firstInvalidUtf8(v); bad != std::string_view::npos) {
          return {ErrorCode::kInvalidArgument,
                  fmt::format("{}: {}: not valid UTF-8 (byte 0x{:02X} at offset {})", at(), where,
                              static_cast<unsigned char>(v[bad]), bad)};
        }
        continue;
      }
      if (f->cpp_type() != FieldDescriptor::CPPTYPE_ENUM) continue;
      const int v = f->is_repeated() ? r->GetRepeatedEnumValue(msg, f, i) : r->GetEnumValue(msg, f);
      if (f->enum_type()->FindValueByNumber(v) != nullptr) continue;
      return {ErrorCode::kInvalidArgument,
              fmt::format("{}: {}: unknown value {} (expected one of {})", at(), where, v,
                          enumValueNames(*f->enum_type()))};
    }
  }
  return Status::ok();
}

}  // namespace

bool isEnumPlaceholder(const google::protobuf::EnumValueDescriptor& v) {
  return v.name().find("UNSPECIFIED") != std::string::npos;
}

std::string enumValueNames(const google::protobuf::EnumDescriptor& e) {
  std::string names;  // the choices, without the UNSPECIFIED placeholder
  for (int i = 0; i < e.value_count(); ++i) {
    if (isEnumPlaceholder(*e.value(i))) continue;
    names += (names.empty() ? "" : ", ") + e.value(i)->name();
  }
  return names;
}

Result<std::string> readFile(const std::string& path) {
  if (Status s = checkReadableFile(path, "file"); !s.isOk()) return s;
  std::ifstream in(path, std::ios::binary);
  if (!in) return {ErrorCode::kIo, fmt::format("cannot open {}", path)};
  // Read up to a bound: endless input (/dev/zero, a pipe that never closes
  // its end is the caller's) or a huge file that is no config is refused,
  // not read into memory until it runs out.
  constexpr std::size_t kMaxConfigBytes = 64 << 20;
  std::string text;
  std::vector<char> block(1 << 16);
  while (in) {
    in.read(block.data(), static_cast<std::streamsize>(block.size()));
    text.append(block.data(), static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxConfigBytes) {
      return {ErrorCode::kInvalidArgument, fmt::format("{}: larger than {} MiB: not a config file",
                                                       path, kMaxConfigBytes >> 20)};
    }
  }
  if (in.bad()) return {ErrorCode::kIo, fmt::format("error reading {}", path)};
  return std::string(withoutUtf8Bom(text));
}

Status parseTextMessage(const std::string& text, const std::string& sourceName,
                        google::protobuf::Message& msg) {
  google::protobuf::TextFormat::Parser parser;
  CollectFirstError errors(sourceName);
  parser.RecordErrorsTo(&errors);
  google::protobuf::TextFormat::ParseInfoTree locations;
  parser.WriteLocationsTo(&locations);
  if (!parser.ParseFromString(text, &msg)) {
    return {ErrorCode::kParse,
            errors.first().empty() ? sourceName + ": malformed config" : errors.first()};
  }
  // Nothing half-applied: a refused message is left empty.
  if (Status s = checkDecimalIntegers(text, sourceName); !s.isOk()) {
    msg.Clear();
    return s;
  }
  if (Status s = checkFieldValues(msg, "", &locations, sourceName); !s.isOk()) {
    msg.Clear();
    return s;
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
