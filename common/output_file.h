#pragma once

#include <fstream>
#include <string>

#include "common/status.h"

namespace ebb {

// A file written as a stream and published whole: the bytes go to a
// temporary file beside the target (named after the process and a serial, so
// concurrent writers never share one), renamed over the target by commit()
// once complete and removed if the writer gives up (an error, an exception).
// A reader, or a run interrupted midway, sees the old file or the new one,
// never half of one. A target that exists and is not a regular file
// (/dev/stdout, a FIFO) is written in place; a symbolic link keeps pointing
// at the new file.
class OutputFile {
 public:
  // E_IO naming `path` when the temporary file cannot be created.
  static Result<OutputFile> open(const std::string& path);
  OutputFile(OutputFile&& o) noexcept;
  OutputFile& operator=(OutputFile&&) = delete;
  OutputFile(const OutputFile&) = delete;
  ~OutputFile();

  std::ofstream& stream() { return out_; }
  // The file being written (the temporary one until commit()).
  const std::string& writing() const { return tmp_.empty() ? target_ : tmp_; }
  // E_IO naming the target (a full disk, a file-size limit).
  Status writeError() const;
  // Flushes, checks the stream and renames the temporary file over the target.
  Status commit();

 private:
  OutputFile(std::string target, std::string tmp, std::ofstream out);
  std::string target_;
  std::string tmp_;  // empty: written in place, or committed
  std::ofstream out_;
};

}  // namespace ebb
