// common/file_io.h and common/gnuplot.h, the output helpers `ebb tune` and
// `ebb replay` share. (Here beside their first user; they belong in a
// tests/common/ folder once there is one.)
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "common/file_io.h"
#include "common/gnuplot.h"
#include "tests/tune/tune_test_util.h"

namespace ebb {
namespace {

namespace fs = std::filesystem;
using tune::testing::scratch;
using tune::testing::slurp;

TEST(FileIo, ReplacesTheFileAndLeavesNoTemporaryBehind) {
  const fs::path dir = scratch("file-io");
  const fs::path path = dir / "out.txt";
  ASSERT_TRUE(writeFile(path, "first, and longer\n").isOk());
  ASSERT_TRUE(writeFile(path, "second\n").isOk());
  EXPECT_EQ(slurp(path), "second\n");
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    ++files;
    EXPECT_EQ(e.path().filename(), "out.txt");
  }
  EXPECT_EQ(files, 1u);
}

// A results file that is a symbolic link (into a shared folder, say) stays a
// link: the file it points at gets the new contents.
TEST(FileIo, ASymbolicLinkKeepsPointingAtTheNewFile) {
  const fs::path dir = scratch("file-io-link");
  const fs::path real = dir / "real.txt";
  const fs::path link = dir / "link.txt";
  ASSERT_TRUE(writeFile(real, "old\n").isOk());
  fs::create_symlink(real.filename(), link);
  ASSERT_TRUE(writeFile(link, "new\n").isOk());
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(slurp(real), "new\n");
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    ++files;
    EXPECT_EQ(e.path().extension(), ".txt") << e.path();
  }
  EXPECT_EQ(files, 2u);  // no temporary file left
}

TEST(FileIo, ErrorNamesThePath) {
  const fs::path path = scratch("file-io-missing") / "no-such-folder" / "out.txt";
  const Status s = writeFile(path, "x");
  EXPECT_EQ(s.code(), ErrorCode::kIo);
  EXPECT_NE(s.message().find(path.string()), std::string::npos) << s.toString();
}

// The folders an output needed are removed again when the run fails, the
// innermost first and only while empty; a folder that existed stays, and so
// does one a result was written into, and every folder once kept.
TEST(FileIo, CreatedFoldersGoAgainOnlyWhileEmpty) {
  const fs::path dir = scratch("file-io-created");
  {
    CreatedFolders created;
    ASSERT_TRUE(prepareOutputFolder((dir / "a" / "b" / "c").string(), "--out", &created).isOk());
    EXPECT_TRUE(fs::is_directory(dir / "a" / "b" / "c"));
  }
  EXPECT_FALSE(fs::exists(dir / "a"));
  EXPECT_TRUE(fs::is_directory(dir));
  {
    CreatedFolders created;
    ASSERT_FALSE(created.create(dir / "x" / "y"));
    ASSERT_TRUE(writeFile(dir / "x" / "result.txt", "kept\n").isOk());
  }
  EXPECT_FALSE(fs::exists(dir / "x" / "y"));
  EXPECT_EQ(slurp(dir / "x" / "result.txt"), "kept\n");
  {
    CreatedFolders created;
    ASSERT_FALSE(created.create(dir / "k"));
    created.keep();
  }
  EXPECT_TRUE(fs::is_directory(dir / "k"));
}

TEST(Gnuplot, RendersPngAndSvgAndKeepsTheScript) {
  const fs::path dir = scratch("gnuplot");
  const Status s = renderGnuplot(
      dir.string(), "fig.gp", 320, 200, [](const std::string& term, const std::string& ext) {
        return "set terminal " + term + "\nset output 'line." + ext + "'\nplot x\n";
      });
  ASSERT_TRUE(s.isOk()) << s.toString();
  EXPECT_EQ(slurp(dir / "line.png").substr(1, 3), "PNG");
  EXPECT_NE(slurp(dir / "line.svg").find("<svg"), std::string::npos);
  const std::string script = slurp(dir / "fig.gp");
  EXPECT_NE(script.find("set terminal pngcairo size 320,200"), std::string::npos) << script;
  EXPECT_NE(script.find("set terminal svg size 320,200"), std::string::npos) << script;
}

TEST(Gnuplot, AFailingScriptQuotesGnuplot) {
  const fs::path dir = scratch("gnuplot-bad");
  const Status s = renderGnuplot(
      dir.string(), "bad.gp", 320, 200,
      [](const std::string&, const std::string&) { return std::string("frobnicate the axes\n"); });
  EXPECT_EQ(s.code(), ErrorCode::kUnavailable);
  EXPECT_NE(s.message().find("gnuplot failed"), std::string::npos) << s.toString();
  EXPECT_NE(s.message().find("frobnicate"), std::string::npos) << s.toString();
}

}  // namespace
}  // namespace ebb
