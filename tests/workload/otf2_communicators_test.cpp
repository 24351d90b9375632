// The OTF2 reader's parts on their own: communicators in trace ranks, and
// locations to ranks.

#include <gtest/gtest.h>

#ifdef EBB_HAVE_OTF2
#include "workload/otf2_communicators.h"
#include "workload/otf2_ranks.h"

namespace ebb::workload::otf2 {
namespace {

// Score-P's definitions: COMM_LOCATIONS lists MPI_COMM_WORLD's locations in
// rank order, a COMM_GROUP indices into it.
struct Defs {
  std::map<OTF2_StringRef, std::string> strings = {{1, "Comm 1"}};
  std::map<OTF2_LocationRef, std::uint32_t> rankOf = {{10, 0}, {11, 1}, {12, 2}};
  Communicators comms;
  Defs() {
    comms.groups[0] = {OTF2_GROUP_TYPE_COMM_LOCATIONS,
                       OTF2_PARADIGM_MPI,
                       OTF2_GROUP_FLAG_NONE,
                       {12, 10, 11}};  // world rank 0 is location 12
    comms.groups[1] = {OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, {2, 0}};
    comms.comms[1] = {1, 1};
    comms.interComms.insert(2);
    comms.strings = &strings;
    comms.rankOf = &rankOf;
    comms.rankCount = 3;
  }
};

TEST(Otf2Communicators, AGroupOfWorldRanksBecomesTraceRanks) {
  Defs d;
  std::string why;
  const Communicator* c = d.comms.resolve(1, why);
  ASSERT_NE(c, nullptr) << why;
  EXPECT_EQ(c->name, "communicator 1 \"Comm 1\"");
  // World rank 2 is location 11 (trace rank 1), world rank 0 location 12.
  EXPECT_EQ(c->members, (std::vector<std::uint32_t>{1, 2}));
  EXPECT_EQ(c->peers, c->members);
  EXPECT_FALSE(c->identity);
  EXPECT_EQ(peerRank(*c, 3, 2, "MPI_Send", "receiver", 0, why), 1u);
  EXPECT_FALSE(peerRank(*c, 3, 1, "MPI_Send", "receiver", 0, why));
  EXPECT_EQ(why, "rank 1 names itself as its peer (rank 0 of communicator 1 \"Comm 1\")");
  EXPECT_FALSE(peerRank(*c, 3, 0, "MPI_Send", "receiver", 1, why));
  EXPECT_EQ(why,
            "MPI_Send on communicator 1 \"Comm 1\", of which rank 0 is not a member (2 of the "
            "trace's 3 ranks)");
  EXPECT_EQ(d.comms.resolved().size(), 1u);
}

TEST(Otf2Communicators, InterCommunicatorsAreRefusedSayingWhy) {
  Defs d;
  std::string why;
  EXPECT_EQ(d.comms.resolve(2, why), nullptr);
  EXPECT_NE(why.find("communicator 2 is an inter-communicator, which ebb does not replay"),
            std::string::npos)
      << why;
  EXPECT_EQ(d.comms.resolve(7, why), nullptr);
  EXPECT_EQ(why, "communicator 7 is not defined (no Comm definition)");
}

// A process's threads are one rank, numbered at its lowest location; a
// location of no process (no location group) is a rank of its own; an
// accelerator's locations belong to the process that created it.
TEST(Otf2Ranks, LocationsOfAProcessShareItsRank) {
  const OTF2_LocationRef t1 = OTF2_LocationRef{1} << 32;
  const std::map<OTF2_LocationRef, LocationDef> locations = {
      {0, {5, 0}},
      {1, {5, 1}},
      {t1 | 0, {5, 0}},
      {t1 | 1, {5, 1}},
      {7, {0, OTF2_UNDEFINED_LOCATION_GROUP}},
      {8, {3, 2}}};
  const std::map<OTF2_LocationGroupRef, LocationGroupDef> groups = {
      {0, {OTF2_LOCATION_GROUP_TYPE_PROCESS, OTF2_UNDEFINED_LOCATION_GROUP}},
      {1, {OTF2_LOCATION_GROUP_TYPE_PROCESS, OTF2_UNDEFINED_LOCATION_GROUP}},
      {2, {OTF2_LOCATION_GROUP_TYPE_ACCELERATOR, 1}}};
  std::uint32_t count = 0;
  const auto rankOf = ranksOfLocations(locations, groups, count);
  EXPECT_EQ(count, 3u);
  EXPECT_EQ(rankOf.at(0), 0u);
  EXPECT_EQ(rankOf.at(t1 | 0), 0u);
  EXPECT_EQ(rankOf.at(1), 1u);
  EXPECT_EQ(rankOf.at(t1 | 1), 1u);
  EXPECT_EQ(rankOf.at(8), 1u);
  EXPECT_EQ(rankOf.at(7), 2u);
}

}  // namespace
}  // namespace ebb::workload::otf2
#endif
