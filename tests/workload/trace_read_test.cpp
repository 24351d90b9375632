// What the MPI trace readers refuse when reading (no replay needed): sends and
// receives that do not pair up, in SimGrid traces as in AMG ones, and an AMG
// waitall completing more requests than its rank has outstanding.
#include <gtest/gtest.h>

#include "common/file_io.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "workload/mpi_trace.h"
#include "workload/simgrid_trace.h"

namespace ebb::workload {
namespace {

namespace fs = std::filesystem;

class TraceRead : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ebb-trace-read-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A SimGrid trace folder of one file per rank, t<rank>.txt.
  Status simgrid(const std::vector<std::string>& ranks) {
    fs::remove_all(dir_ / "ti");
    fs::create_directories(dir_ / "ti");
    for (std::size_t r = 0; r < ranks.size(); ++r)
      std::ofstream(ti(static_cast<int>(r))) << ranks[r];
    Result<MpiTrace> t = readSimgridTrace((dir_ / "ti").string(), 1e9);
    return t ? Status::ok() : t.status();
  }

  Status amg(const std::string& rows) {
    const fs::path p = dir_ / "t.csv";
    std::ofstream(p) << "rank,op,t_enter_s,t_exit_s,peer,bytes,tag,request\n" << rows;
    Result<MpiTrace> t = readAmgCsv(p.string());
    return t ? Status::ok() : t.status();
  }

  // The file of `rank` in the SimGrid folder.
  std::string ti(int rank) const {
    return (dir_ / "ti" / ("t" + std::to_string(rank) + ".txt")).string();
  }

  fs::path dir_;
};

// A folder missing one rank's file names that rank.
TEST_F(TraceRead, AMissingRankFileIsNamed) {
  const Status s =
      simgrid({"0 init\n0 finalize\n", "1 init\n1 finalize\n", "2 init\n2 finalize\n"});
  ASSERT_TRUE(s.isOk()) << s.toString();
  fs::remove(ti(1));
  const Result<MpiTrace> t = readSimgridTrace((dir_ / "ti").string(), 1e9);
  ASSERT_FALSE(t);
  EXPECT_NE(t.status().message().find("no file holds rank 1 (the files hold 2 ranks, the highest "
                                      "2"),
            std::string::npos)
      << t.status().toString();
}

// An endless line (/dev/zero given as a trace, a binary file) stops at the
// line bound with the place, instead of filling memory.
TEST_F(TraceRead, AnEndlessLineIsRefusedAtTheLineBound) {
  const std::string endless(kMaxTextLine + 1, 'x');
  const Status a = amg(endless);
  EXPECT_EQ(a.code(), ErrorCode::kParse);
  EXPECT_NE(a.message().find(":2: line longer than 1048576 bytes: not a text trace"),
            std::string::npos)
      << a.toString();
  const Status s = simgrid({"0 init\n" + endless});
  EXPECT_EQ(s.code(), ErrorCode::kParse);
  EXPECT_NE(s.message().find(ti(0) + ":2: line longer than"), std::string::npos) << s.toString();
}

// Found by a bad-input probe: a send no rank receives, or a receive no rank
// sends to, replayed with exit 0 (a truncated set of rank files).
TEST_F(TraceRead, SimgridSendsAndReceivesMustPairUp) {
  struct Case {
    std::vector<std::string> ranks;
    std::string says;  // after rank 0's file
  };
  const Case cases[] = {
      {{"0 init\n0 send 1 64\n0 finalize\n", "1 init\n1 finalize\n"},
       ":2: this send from rank 0 to rank 1 (tag 0) and 0 after it have no matching receive on "
       "rank 1: is the trace truncated?"},
      {{"0 init\n0 irecv 1 64\n0 wait\n", "1 init\n"},
       ":2: this receive on rank 0 from rank 1 (tag 0) and 0 after it have no matching send: is "
       "the trace truncated?"},
      // Matched per tag: a receive of another tag does not take the send.
      {{"0 isend 1 5 8\n0 isend 1 5 8\n0 waitAll\n", "1 compute 10\n1 irecv 0 5 8\n1 recv 0 6 8\n"},
       ":2: this send from rank 0 to rank 1 (tag 5) and 0 after it have no matching receive"},
  };
  for (const Case& c : cases) {
    const Status s = simgrid(c.ranks);
    ASSERT_FALSE(s.isOk()) << c.says;
    EXPECT_EQ(s.code(), ErrorCode::kParse);
    EXPECT_NE(s.message().find(ti(0) + c.says), std::string::npos) << s.message();
  }
  // The other rank's file and line when the receive is left over there.
  Status s = simgrid({"0 init\n", "1 init\n1 compute 5\n1 recv 0 8\n"});
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find(ti(1) + ":3: this receive on rank 1 from rank 0"), std::string::npos)
      << s.message();
  // Paired up, with collectives around them: read.
  s = simgrid({"0 init\n0 send 1 8\n0 isend 1 3 8\n0 wait\n0 barrier\n",
               "1 init\n1 recv 0 8\n1 irecv 0 3 8\n1 waitall\n1 barrier\n"});
  EXPECT_TRUE(s.isOk()) << s.toString();
}

// Found by a bad-input probe: a waitall of 5 requests on a rank with one
// outstanding was clamped to one by the replay, exit 0.
TEST_F(TraceRead, AmgWaitallCompletesOnlyOutstandingRequests) {
  Status s =
      amg("0,isend,0,0.000001,1,64,0,1\n1,irecv,0,0.000001,0,64,0,1\n"
          "0,waitall,0.000001,0.000002,,,,5\n1,waitall,0.000001,0.000002,,,,1\n");
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.code(), ErrorCode::kParse);
  EXPECT_NE(s.message().find((dir_ / "t.csv").string() +
                             ":4: waitall of 5 requests but rank 0 has 1 outstanding"),
            std::string::npos)
      << s.message();
  // Requests a waitall completed are no longer outstanding; blocking calls
  // never are.
  s =
      amg("0,isend,0,0.1,1,64,0,1\n0,isend,0.1,0.2,1,64,0,2\n0,waitall,0.2,0.3,,,,2\n"
          "0,send,0.3,0.4,1,64,0,\n0,waitall,0.4,0.5,,,,1\n"
          "1,irecv,0,0.1,0,64,0,1\n1,irecv,0.1,0.2,0,64,0,2\n1,recv,0.2,0.3,0,64,0,\n"
          "1,waitall,0.3,0.4,,,,2\n");
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("t.csv:6: waitall of 1 requests but rank 0 has 0 outstanding"),
            std::string::npos)
      << s.message();
  s =
      amg("0,isend,0,0.1,1,64,0,1\n0,isend,0.1,0.2,1,64,0,2\n0,waitall,0.2,0.3,,,,1\n"
          "0,waitall,0.3,0.4,,,,1\n1,irecv,0,0.1,0,64,0,1\n1,irecv,0.1,0.2,0,64,0,2\n"
          "1,waitall,0.2,0.3,,,,2\n");
  EXPECT_TRUE(s.isOk()) << s.toString();
}

// A receive smaller than its matching send would fail in MPI: refused
// naming both lines. A larger one is legal (MPI receives what was sent).
TEST_F(TraceRead, AmgReceiveSmallerThanItsSendIsRefused) {
  Status s = amg("0,send,0,0.1,1,1024,7,\n1,recv,0,0.1,0,512,7,\n");
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("t.csv:3: this receive on rank 1 from rank 0 (tag 7) takes 512 "
                             "bytes, less than the 1024 bytes of its matching send"),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("t.csv:2): MPI would fail it (MPI_ERR_TRUNCATE)"), std::string::npos)
      << s.message();
  EXPECT_TRUE(amg("0,send,0,0.1,1,1024,7,\n1,recv,0,0.1,0,2048,7,\n").isOk());
}

// Numbers are decimal in every trace, as everywhere in ebb: a hexadecimal
// time or argument is refused naming it (strtod and stod read them), and a
// SimGrid rank, size or count must be whole (1.4 was read as rank 1).
TEST_F(TraceRead, HexadecimalAndFractionalNumbersAreRefused) {
  Status hex = amg("0,send,0x1p-20,0.000002,1,64,1,\n1,recv,0.000001,0.000002,0,64,1,\n");
  ASSERT_FALSE(hex.isOk());
  EXPECT_NE(hex.message().find("t.csv:2: t_enter_s '0x1p-20' is not a time in seconds"),
            std::string::npos)
      << hex.message();
  Status sgHex = simgrid({"0 send 0x1 16\n", "1 recv 0 16\n"});
  ASSERT_FALSE(sgHex.isOk());
  EXPECT_NE(sgHex.message().find(ti(0) + ":1: argument '0x1' of send is not a decimal number"),
            std::string::npos)
      << sgHex.message();
  Status frac = simgrid({"0 send 1.4 100\n", "1 recv 0 100\n"});
  ASSERT_FALSE(frac.isOk());
  EXPECT_NE(frac.message().find(ti(0) + ":1: argument '1.4' of send must be a whole number"),
            std::string::npos)
      << frac.message();
  // A computation's flops may have a fraction; 1e3 is a whole number.
  EXPECT_TRUE(simgrid({"0 compute 2.5\n0 send 1 1e3\n", "1 recv 0 1000\n"}).isOk());
}

// SimGrid tags are kept exact (clamped at 2^30, two tags became one and the
// 200-double send met the 100-double receive); one past 32 bits is refused.
// A receive smaller than its send is refused as in AMG traces.
TEST_F(TraceRead, SimgridTagsAreExactAndReceivesHoldTheirSends) {
  EXPECT_TRUE(simgrid({"0 isend 1 1073741824 100\n0 isend 1 1073741825 200\n0 waitall\n",
                       "1 irecv 0 1073741825 200\n1 irecv 0 1073741824 100\n1 waitall\n"})
                  .isOk());
  Status big = simgrid({"0 send 1 4294967296 100\n", "1 recv 0 4294967296 100\n"});
  ASSERT_FALSE(big.isOk());
  EXPECT_NE(big.message().find(ti(0) + ":1: tag 4294967296 is beyond 2147483647"),
            std::string::npos)
      << big.message();
  Status small = simgrid({"0 send 1 100\n", "1 recv 0 50\n"});
  ASSERT_FALSE(small.isOk());
  EXPECT_NE(small.message().find("takes 400 bytes, less than the 800 bytes of its matching send"),
            std::string::npos)
      << small.message();
}

// An AMG CSV is read by position: a header naming other columns, or the
// same in another order, is refused on line 1; the right one in any case
// and spacing, or none at all, is read.
TEST_F(TraceRead, AmgHeaderMustNameTheColumnsInOrder) {
  const fs::path p = dir_ / "h.csv";
  const std::string rows = "0,send,0,0.1,1,64,0,\n1,recv,0,0.1,0,64,0,\n";
  const auto read = [&](const std::string& header) {
    std::ofstream(p) << header << rows;
    Result<MpiTrace> t = readAmgCsv(p.string());
    return t ? Status::ok() : t.status();
  };
  const Status swapped = read("rank,op,t_exit_s,t_enter_s,peer,bytes,tag,request\n");
  ASSERT_FALSE(swapped.isOk());
  EXPECT_NE(swapped.message().find(p.string() + ":1: header 'rank,op,t_exit_s,t_enter_s,"),
            std::string::npos)
      << swapped.message();
  EXPECT_NE(swapped.message().find("in this order (they are read by position)"), std::string::npos);
  EXPECT_FALSE(read("a,b,c,d,e,f,g,h\n").isOk());
  EXPECT_FALSE(read("rank,op,t_enter_s,t_exit_s,peer,bytes,tag\n").isOk());
  EXPECT_TRUE(read("Rank, Op, T_enter_s, T_exit_s, Peer, Bytes, Tag, Request\r\n").isOk());
  EXPECT_TRUE(read("").isOk());
  // A compressed archive read as text is named so, not echoed byte for byte;
  // control bytes of a header are quoted as \xNN and a long one is cut.
  const Status gz = read(std::string("\x1f\x8b\x08\0\x01\x02,garbage\n", 15));
  EXPECT_NE(
      gz.message().find(p.string() + ":1: binary data (NUL byte): not a text trace (a compressed "
                                     "archive? unpack it)"),
      std::string::npos)
      << gz.message();
  const Status ctl = read("\x1b[31mrank" + std::string(100, 'x') + "\n");
  EXPECT_NE(ctl.message().find("header '\\x1b[31mrank"), std::string::npos) << ctl.message();
  EXPECT_NE(ctl.message().find("xxx...': expected"), std::string::npos) << ctl.message();
}

}  // namespace
}  // namespace ebb::workload
