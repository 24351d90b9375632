#pragma once

#include <filesystem>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace ebb {

// Writes `contents` to `path` atomically, as an OutputFile
// (common/output_file.h): a reader, or a run interrupted midway, sees the old
// file or the new one, never half of one. E_IO names the path.
Status writeFile(const std::filesystem::path& path, std::string_view contents);

// Before reading `path` as `what` (e.g. "topology file"): E_IO naming the
// path and why when it does not exist, is a folder, or cannot be opened.
Status checkReadableFile(const std::filesystem::path& path, std::string_view what);

// Text files saved by some editors (Windows Notepad) start with a UTF-8 byte
// order mark. The readers of text inputs skip it, so line 1 reads as written.
inline constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";
std::string_view withoutUtf8Bom(std::string_view text);
// Consumes the mark at the stream's current position, if it is there.
void skipUtf8Bom(std::istream& in);

// The longest line a text input may have (a traffic file, a topology, a
// trace): an endless "line" (/dev/zero, a binary file) ends the read there
// instead of filling memory.
inline constexpr std::size_t kMaxTextLine = std::size_t{1} << 20;
// std::getline with that bound: false at the end of the stream with nothing
// read, or with `tooLong` set once a line runs past `maxBytes` (the stream
// is then left mid-line).
bool readBoundedLine(std::istream& in, std::string& line, bool& tooLong,
                     std::size_t maxBytes = kMaxTextLine);
// The rule a reader names for such a line: "line longer than 1048576 bytes:
// not a text <what>".
std::string lineTooLongRule(std::string_view what);
// A line with a NUL byte (a binary or compressed file read as text): the
// rule "binary data (NUL byte): not a text <what>"; empty for a text line.
// Readers check it before a field error would echo the bytes.
std::string binaryLineRule(std::string_view line, std::string_view what);
// `text` as an error message may quote it: control bytes as \xNN, and cut
// after `max` bytes with "..." (a whole garbled line is no help).
std::string printable(std::string_view text, std::size_t max = 60);
// Whether `text` has such a control byte (a newline, a NUL, an escape...).
bool hasControlBytes(std::string_view text);

// The folders a command created for its results, removed again (deepest
// first, each only while empty) unless keep() is called: a run that fails
// leaves no empty folder behind, and never touches a file in one. So does a
// run that SIGINT or SIGTERM ends (Ctrl-C, kill), where nothing else set a
// handler for them: the handler removes the still-empty folders (rmdir is
// async-signal-safe) and dies of the signal as before.
class CreatedFolders {
 public:
  CreatedFolders() = default;
  CreatedFolders(const CreatedFolders&) = delete;
  CreatedFolders& operator=(const CreatedFolders&) = delete;
  ~CreatedFolders();
  // Creates `dir` and any missing parent, remembering those it created.
  std::error_code create(const std::filesystem::path& dir);
  void keep();

 private:
  std::vector<std::filesystem::path> created_;  // outermost first
};

// Before a run: the output folder `dir` (given as `option`, e.g. "--out") can
// hold its results. Creates it if needed (in `created`, when given) and
// proves it writable with a probe file, so a bad folder is an error before
// the work, not after it. E_INVALID for an empty name or a path that is a
// file; E_IO naming the path and why.
Status prepareOutputFolder(const std::string& dir, std::string_view option,
                           CreatedFolders* created = nullptr);

// Before a run that ends by writing the file `path` (given as `option`, e.g.
// "--emit-config"): E_INVALID when it is one of `inputs` (the same file by
// any name: writing it would destroy an input) or a folder; E_IO naming the
// path and why when its folder does not exist or cannot be written into.
Status checkOutputFile(const std::filesystem::path& path, std::string_view option,
                       const std::vector<std::filesystem::path>& inputs);

}  // namespace ebb
