#pragma once

#include <string>
#include <vector>

#include <google/protobuf/message.h>

#include "common/status.h"

namespace ebb::config {

// A decimal number as every value ebb reads takes it: empty when `s` is one
// (`out` set), else what it is: "not a decimal number" (hex floats, inf,
// nan), or out of range (1e400; 1e-320, below the smallest normal double).
std::string parseDecimal(const std::string& s, double& out);

// Applies "path.to.field=value" to a message through reflection, e.g.
// "fabric.kary_n_tree.k=8". Scalars, enums (by name) and bools only; a message
// field on the path is created if unset (selecting it within a oneof).
// E_INVALID names the field and the rule on failure; the message is unchanged then.
Status applyOverride(google::protobuf::Message& msg, const std::string& assignment);

// What applying `assignment` to `msg` would drop: when the path selects a
// member of a oneof other than the one `msg` has (a workload pattern, a
// fabric), "replaces <parent> '<chosen>' ... with '<member>' ..."; else
// empty. The commands print it as a note, so a switch is never silent.
std::string oneofSwitchNote(const google::protobuf::Message& msg, const std::string& assignment);

// A command line's overrides, in order: each field once (a second would
// silently win), no two in different members of one oneof (the later
// would drop the earlier), each applied; `notes` gets the oneof switches of those that
// applied (a refused one switches nothing). `lpi.mode=OFF` drops the
// config's other lpi fields (read by an idle mode only) that the command
// line does not set, with a note. E_INVALID at the first bad one,
// with the message as it was before it. The commands exit 2 on it: an
// override is the command line.
Status applyCommandLineOverrides(google::protobuf::Message& msg,
                                 const std::vector<std::string>& overrides,
                                 std::vector<std::string>& notes);

// Lays `over` over `into`: what `over` sets replaces what `into` has, a
// repeated field whole (MergeFrom would append: an inline tune base's
// xgft { m: 2 m: 2 } over a file's m: 4 m: 4 made a four-level tree), a
// scalar, a oneof member (the other is dropped); a message set on both
// sides is laid over field by field.
void mergeReplacing(const google::protobuf::Message& over, google::protobuf::Message& into);

}  // namespace ebb::config
