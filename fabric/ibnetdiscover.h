#pragma once

#include <istream>
#include <string>
#include <vector>

#include "common/status.h"
#include "fabric/topology.h"

namespace ebb::fabric {

// Reads the text `ibnetdiscover` prints (and ibsim net files, which share its
// grammar) into a Topology: Switch nodes become switches, Ca (or Hca) nodes
// hosts; Rt (router) nodes are checked and then left out with their cables.
// Levels are assigned from the hosts upward. Node names are the node
// descriptions when given (the quoted text after '#'), else the node ids.
// Errors: E_PARSE "<source>:<line>: <rule>"; structural problems
// E_NOT_FAT_TREE "<source>: ..."; an unreadable file E_IO naming the path.
// `roots`, when given, names the top switches (TopologyBuilder::setRoots;
// `rootsField` is the setting that gave them, for its errors).
Result<Topology> parseIbnetdiscover(std::istream& in, const std::string& sourceName,
                                    const std::vector<std::string>& roots = {},
                                    const std::string& rootsField = "roots");
Result<Topology> readIbnetdiscoverFile(const std::string& path,
                                       const std::vector<std::string>& roots = {},
                                       const std::string& rootsField = "roots");

}  // namespace ebb::fabric
