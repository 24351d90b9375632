#include "configs/overrides.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <google/protobuf/descriptor.h>

#include "configs/config_loader.h"

namespace ebb::config {

// Decimal only, as a config file's numbers: no hex floats, inf, nan or
// spaces. Empty when `s` is one, else what the value is: a decimal number a
// double cannot hold (1e400, or 1e-320 below the smallest normal double) is
// out of range, not "not a decimal number".
std::string parseDecimal(const std::string& s, double& out) {
  const std::string notDecimal = "not a decimal number";
  if (s.empty() || s.find_first_not_of("0123456789+-.eE") != std::string::npos) return notDecimal;
  std::size_t used = 0;
  try {
    out = std::stod(s, &used);
  } catch (const std::out_of_range&) {
    if (std::fabs(std::strtod(s.c_str(), nullptr)) > 1) {
      return fmt::format("out of range: too large for a double (at most {:g})",
                         std::numeric_limits<double>::max());
    }
    return fmt::format(
        "out of range: too small for a double (its smallest normal magnitude is "
        "{:g}; write 0 for zero)",
        std::numeric_limits<double>::min());
  } catch (const std::exception&) {
    return notDecimal;
  }
  return used == s.size() ? std::string() : notDecimal;
}

namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

template <class T>
bool parseNumber(const std::string& s, T& out) {
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, out);
  return ec == std::errc() && ptr == end;
}

Status setScalar(Message& m, const FieldDescriptor* f, const std::string& key,
                 const std::string& value) {
  const auto* r = m.GetReflection();
  const auto badValue = [&](const std::string& is) {
    return invalidArgument(fmt::format("override {}={}: the value is {}", key, value, is));
  };
  const auto bad = [&](const std::string& what) { return badValue("not " + what); };
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32: {
      std::int32_t v;
      if (!parseNumber(value, v)) return bad("a 32-bit integer");
      r->SetInt32(&m, f, v);
      break;
    }
    case FieldDescriptor::CPPTYPE_INT64: {
      std::int64_t v;
      if (!parseNumber(value, v)) return bad("a 64-bit integer");
      r->SetInt64(&m, f, v);
      break;
    }
    case FieldDescriptor::CPPTYPE_UINT32: {
      std::uint32_t v;
      if (!parseNumber(value, v)) return bad("an unsigned 32-bit integer");
      r->SetUInt32(&m, f, v);
      break;
    }
    case FieldDescriptor::CPPTYPE_UINT64: {
      std::uint64_t v;
      if (!parseNumber(value, v)) return bad("an unsigned 64-bit integer");
      r->SetUInt64(&m, f, v);
      break;
    }
    case FieldDescriptor::CPPTYPE_DOUBLE: {
      double v = 0;
      if (std::string is = parseDecimal(value, v); !is.empty()) return badValue(is);
      r->SetDouble(&m, f, v);
      break;
    }
    case FieldDescriptor::CPPTYPE_FLOAT: {
      double v = 0;
      if (std::string is = parseDecimal(value, v); !is.empty()) return badValue(is);
      r->SetFloat(&m, f, static_cast<float>(v));
      break;
    }
    case FieldDescriptor::CPPTYPE_BOOL: {
      if (value != "true" && value != "false") return bad("true or false");
      r->SetBool(&m, f, value == "true");
      break;
    }
    case FieldDescriptor::CPPTYPE_STRING:
      if (f->type() == FieldDescriptor::TYPE_STRING && firstInvalidUtf8(value) != std::string::npos)
        return badValue("not valid UTF-8");
      r->SetString(&m, f, value);
      break;
    case FieldDescriptor::CPPTYPE_ENUM: {
      // A *_UNSPECIFIED placeholder is "not given", not a choice: given
      // explicitly it would be a second spelling of the default (and a tune
      // sweep would run that setting twice), so it is refused like a number.
      const auto* ev = f->enum_type()->FindValueByName(value);
      if (!ev || isEnumPlaceholder(*ev)) {
        return bad("one of " + enumValueNames(*f->enum_type()));
      }
      r->SetEnum(&m, f, ev);
      break;
    }
    case FieldDescriptor::CPPTYPE_MESSAGE:
      return invalidArgument(
          fmt::format("override {}: {} is a message, name one of its fields", key, f->name()));
  }
  return Status::ok();
}

}  // namespace

std::string oneofSwitchNote(const Message& msg, const std::string& assignment) {
  const std::string key = assignment.substr(0, assignment.find('='));
  const Message* m = &msg;
  for (std::size_t start = 0;;) {
    const auto dot = key.find('.', start);
    const std::string name = key.substr(start, dot == std::string::npos ? dot : dot - start);
    const FieldDescriptor* f = m->GetDescriptor()->FindFieldByName(name);
    if (f == nullptr || f->is_repeated()) return {};
    if (const auto* oneof = f->real_containing_oneof()) {
      const FieldDescriptor* chosen = m->GetReflection()->GetOneofFieldDescriptor(*m, oneof);
      if (chosen != nullptr && chosen != f) {
        return fmt::format(
            "override {} replaces {} '{}' of the config with '{}' (its other fields at their "
            "defaults)",
            assignment, start == 0 ? "the config's" : key.substr(0, start - 1), chosen->name(),
            name);
      }
    }
    if (dot == std::string::npos || f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) return {};
    m = &m->GetReflection()->GetMessage(*m, f);
    start = dot + 1;
  }
}

Status applyOverride(Message& msg, const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    return invalidArgument(fmt::format("override '{}': expected key=value", assignment));
  }
  const std::string key = assignment.substr(0, eq);
  const std::string value = assignment.substr(eq + 1);
  // As every option: an unset "$VAR" must not read as "the default".
  if (value.empty()) {
    return invalidArgument(fmt::format(
        "override {}=: the value is empty (leave the override out for the default)", key));
  }
  // Work on a copy so that a failed override leaves the message untouched.
  std::unique_ptr<Message> copy(msg.New());
  copy->CopyFrom(msg);
  Message* m = copy.get();
  std::size_t start = 0;
  while (true) {
    const auto dot = key.find('.', start);
    const std::string name = key.substr(start, dot == std::string::npos ? dot : dot - start);
    const FieldDescriptor* f = m->GetDescriptor()->FindFieldByName(name);
    if (!f) {
      return invalidArgument(fmt::format("override {}: {} has no field '{}'", key,
                                         m->GetDescriptor()->full_name(), name));
    }
    if (f->is_repeated()) {
      return invalidArgument(
          fmt::format("override {}: '{}' is a list; edit it in the config file", key, name));
    }
    if (dot == std::string::npos) {
      if (Status s = setScalar(*m, f, key, value); !s.isOk()) return s;
      break;
    }
    if (f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) {
      return invalidArgument(fmt::format("override {}: '{}' is not a message", key, name));
    }
    m = m->GetReflection()->MutableMessage(m, f);
    start = dot + 1;
  }
  msg.CopyFrom(*copy);
  return Status::ok();
}

namespace {

// `lpi.mode=OFF` on the command line turns low-power idle off for a config
// that set its timers or link speed: those fields, read by an idle mode only
// (and refused without one), are dropped with a note, unless the command
// line sets them too. Without this no override could turn LPI off there.
void dropWhatAModeOffLeavesUnread(Message& msg, const std::vector<std::string>& keys,
                                  std::vector<std::string>& notes) {
  if (std::find(keys.begin(), keys.end(), "lpi.mode") == keys.end()) return;
  const FieldDescriptor* lpiField = msg.GetDescriptor()->FindFieldByName("lpi");
  if (lpiField == nullptr || lpiField->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) return;
  Message* lpi = msg.GetReflection()->MutableMessage(&msg, lpiField);
  const FieldDescriptor* mode = lpi->GetDescriptor()->FindFieldByName("mode");
  if (mode == nullptr || mode->cpp_type() != FieldDescriptor::CPPTYPE_ENUM) return;
  const std::string off = lpi->GetReflection()->GetEnum(*lpi, mode)->name();
  if (off != "OFF" && off != "MODE_UNSPECIFIED") return;
  std::vector<const FieldDescriptor*> set;
  lpi->GetReflection()->ListFields(*lpi, &set);
  std::vector<std::string> dropped;
  for (const FieldDescriptor* f : set) {
    const std::string path = "lpi." + f->name();
    const bool given = std::any_of(keys.begin(), keys.end(), [&](const std::string& k) {
      return k == path || k.rfind(path + ".", 0) == 0;  // the field, or one inside it
    });
    if (f == mode || given) continue;
    lpi->GetReflection()->ClearField(lpi, f);
    dropped.push_back(path);
  }
  if (dropped.empty()) return;
  notes.push_back(fmt::format(
      "override lpi.mode={} drops {} of the config (they apply with a low-power idle mode only)",
      off, fmt::join(dropped, ", ")));
}

}  // namespace

namespace {

// The members of oneofs a key's path selects: ("workload", "pattern") ->
// "uniform" for workload.uniform.rate, keyed by the oneof's place.
struct OneofChoice {
  std::string where;   // "workload" (the message holding the oneof), "" at the top
  std::string oneof;   // its name
  std::string member;  // the field the path goes through
};

std::vector<OneofChoice> oneofChoices(const google::protobuf::Descriptor* d,
                                      const std::string& key) {
  std::vector<OneofChoice> out;
  for (std::size_t start = 0; d != nullptr;) {
    const auto dot = key.find('.', start);
    const std::string name = key.substr(start, dot == std::string::npos ? dot : dot - start);
    const FieldDescriptor* f = d->FindFieldByName(name);
    if (f == nullptr || f->is_repeated()) break;
    if (const auto* oneof = f->real_containing_oneof()) {
      out.push_back({start == 0 ? "" : key.substr(0, start - 1), oneof->name(), name});
    }
    if (dot == std::string::npos) break;
    d = f->message_type();
    start = dot + 1;
  }
  return out;
}

}  // namespace

Status applyCommandLineOverrides(Message& msg, const std::vector<std::string>& overrides,
                                 std::vector<std::string>& notes) {
  std::vector<std::string> keys;
  std::vector<std::pair<std::string, OneofChoice>> chosen;  // override, what it selects
  for (const std::string& ov : overrides) {
    const std::string key = ov.substr(0, ov.find('='));
    if (std::find(keys.begin(), keys.end(), key) != keys.end()) {
      return invalidArgument(
          fmt::format("override {}: {} is given twice on the command line", ov, key));
    }
    // Two overrides in different members of one choice: the later would
    // silently drop the earlier (and the config's fields of that choice).
    for (const OneofChoice& c : oneofChoices(msg.GetDescriptor(), key)) {
      for (const auto& [earlier, e] : chosen) {
        if (e.where != c.where || e.oneof != c.oneof || e.member == c.member) continue;
        return invalidArgument(fmt::format(
            "override {}: selects '{}' of {}, but override {} selected '{}': they cannot "
            "both apply (give one)",
            ov, c.member, c.where.empty() ? c.oneof : c.where, earlier, e.member));
      }
      chosen.emplace_back(ov, c);
    }
    keys.push_back(key);
    const std::string note = oneofSwitchNote(msg, ov);
    if (Status s = applyOverride(msg, ov); !s.isOk()) return s;
    if (!note.empty()) notes.push_back(note);
  }
  dropWhatAModeOffLeavesUnread(msg, keys, notes);
  return Status::ok();
}

void mergeReplacing(const Message& over, Message& into) {
  const google::protobuf::Reflection* ro = over.GetReflection();
  const google::protobuf::Reflection* ri = into.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  ro->ListFields(over, &fields);
  std::unique_ptr<Message> rest(over.New());
  rest->CopyFrom(over);
  for (const FieldDescriptor* f : fields) {
    if (f->is_repeated()) {
      ri->ClearField(&into, f);  // MergeFrom then appends to nothing: a replacement
    } else if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE && ri->HasField(into, f)) {
      // The same message (or oneof member) on both sides: field by field.
      mergeReplacing(ro->GetMessage(over, f), *ri->MutableMessage(&into, f));
      rest->GetReflection()->ClearField(rest.get(), f);
    }
  }
  into.MergeFrom(*rest);
}

}  // namespace ebb::config
