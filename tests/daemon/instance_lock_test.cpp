// One `ebb agent` per fabric: the flock on the lock file. flock locks belong
// to the open file description, so two acquires of one path conflict inside
// one test process as they would between two processes.
#include "daemon/instance_lock.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace ebb::daemon {
namespace {

std::string scratch(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/ebb_lock_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string p = dir + "/" + name;
  std::filesystem::remove(p);
  return p;
}

TEST(InstanceLock, ASecondAcquireOfTheSamePathFailsUntilTheFirstIsReleased) {
  const std::string path = scratch("fabric.lock");
  auto first = InstanceLock::acquire(path);
  ASSERT_TRUE(first) << first.status().toString();
  {
    std::ifstream in(path);
    std::stringstream pid;
    pid << in.rdbuf();
    EXPECT_EQ(pid.str(), std::to_string(::getpid()) + "\n");
  }
  auto second = InstanceLock::acquire(path);
  ASSERT_FALSE(second);
  EXPECT_EQ(second.status().code(), ErrorCode::kUnavailable);
  const std::string m = second.status().message();
  EXPECT_NE(m.find("another ebb agent (pid " + std::to_string(::getpid()) + ") holds " + path),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("one agent per fabric"), std::string::npos) << m;
  // The holder's pid is still in the file: the failed attempt wrote nothing.
  {
    std::ifstream in(path);
    std::stringstream pid;
    pid << in.rdbuf();
    EXPECT_EQ(pid.str(), std::to_string(::getpid()) + "\n");
  }
  // Released with its descriptor (as at exit): the next one gets it.
  { InstanceLock gone = std::move(*first); }
  auto third = InstanceLock::acquire(path);
  EXPECT_TRUE(third) << third.status().toString();
}

// Another process (as a second `ebb agent` would be) is refused too.
TEST(InstanceLock, AnotherProcessIsRefused) {
  const std::string path = scratch("other.lock");
  auto held = InstanceLock::acquire(path);
  ASSERT_TRUE(held) << held.status().toString();
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto mine = InstanceLock::acquire(path);
    ::_exit(mine ? 0 : 3);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3) << "the child got the lock the parent holds";
}

TEST(InstanceLock, AFileThatCannotBeOpenedIsAnErrorNamingIt) {
  const std::string path = scratch("no-such-folder") + "/x.lock";
  auto r = InstanceLock::acquire(path);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.status().code(), ErrorCode::kIo);
  EXPECT_NE(r.status().message().find("agent.lock_file " + path), std::string::npos)
      << r.status().toString();
}

TEST(InstanceLock, DefaultPathPerCaPortAndIbsimSocket) {
  const std::string dir = std::filesystem::path(scratch("d")).parent_path().string();
  ib::UmadPortSpec any;
  EXPECT_EQ(defaultLockPath(any, dir, nullptr, nullptr), dir + "/ebb-agent-any-any.lock");
  ib::UmadPortSpec mlx{"mlx5_0", 1};
  EXPECT_EQ(defaultLockPath(mlx, dir, "/ignored", nullptr), dir + "/ebb-agent-mlx5_0-1.lock");
  EXPECT_EQ(defaultLockPath(mlx, dir, nullptr, "ebb-12/3"),
            dir + "/ebb-agent-mlx5_0-1-ibsim-ebb-12_3.lock");
  // The run folder not writable (here: missing): $XDG_RUNTIME_DIR.
  EXPECT_EQ(defaultLockPath(mlx, dir + "/missing", "/xdg-runtime", nullptr),
            "/xdg-runtime/ebb-agent-mlx5_0-1.lock");
}

// The state file: in the state folder when writable, else beside the lock.
TEST(InstanceLock, DefaultStatePathPrefersTheStateFolder) {
  const std::string dir = std::filesystem::path(scratch("s")).parent_path().string();
  ib::UmadPortSpec mlx{"mlx5_0", 1};
  EXPECT_EQ(defaultStatePath(mlx, dir, "/run/x", nullptr, "ebb-1"),
            dir + "/ebb-agent-mlx5_0-1-ibsim-ebb-1.gates");
  EXPECT_EQ(defaultStatePath(mlx, dir + "/missing", dir, nullptr, nullptr),
            dir + "/ebb-agent-mlx5_0-1.gates");
  EXPECT_EQ(defaultStatePath(mlx, dir + "/missing", dir + "/missing", "/xdg-runtime", nullptr),
            "/xdg-runtime/ebb-agent-mlx5_0-1.gates");
}

}  // namespace
}  // namespace ebb::daemon
