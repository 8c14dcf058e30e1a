// Whole-file reads: what counts as absent (nothing there) and what is an error (something there
// that cannot be read), with links refused or, when asked for, followed.
#include "fs/file_io.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "core/error.h"
#include "support/test_support.h"

namespace apexnpu {
namespace {

using test::TempDir;
namespace stdfs = std::filesystem;

// The message of the Error that `read` throws, or "" when it throws none.
template <typename Read>
std::string error_of(Read read) {
  try {
    read();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(TryReadFile, NothingThereIsAbsent) {
  TempDir tmp;
  test::write_file(tmp / "file", "bytes");
  EXPECT_EQ(try_read_file(tmp / "file"), std::optional<std::string>("bytes"));
  EXPECT_FALSE(try_read_file(tmp / "missing")) << "ENOENT";
  EXPECT_FALSE(try_read_file(tmp / "missing/below")) << "ENOENT in a missing directory";
  EXPECT_FALSE(try_read_file(tmp / "file/below")) << "ENOTDIR: a file where a directory would be";
}

TEST(TryReadFile, ADirectoryWhereTheFileShouldBeIsAnError) {
  TempDir tmp;
  stdfs::create_directory(tmp / "dir");
  const std::string error = error_of([&] { try_read_file(tmp / "dir"); });
  EXPECT_NE(error.find("dir is not a regular file"), std::string::npos) << error;
}

TEST(TryReadFile, AnIoErrorIsAnErrorNotAbsence) {
  // /proc/self/mem is a regular file whose first page (address 0) is never mapped: reading it
  // fails with EIO, for root too.
  const std::string error = error_of([] { try_read_file("/proc/self/mem"); });
  EXPECT_NE(error.find("cannot read /proc/self/mem: Input/output error"), std::string::npos) << error;
}

TEST(TryReadFile, AFileWithoutReadPermissionIsAnError) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads a file of mode 0000 (EIO is tested above instead)";
  TempDir tmp;
  test::write_file(tmp / "secret", "s");
  stdfs::permissions(tmp / "secret", stdfs::perms::none);
  const std::string error = error_of([&] { try_read_file(tmp / "secret"); });
  stdfs::permissions(tmp / "secret", stdfs::perms::owner_all);
  EXPECT_NE(error.find("Permission denied"), std::string::npos) << error;
}

TEST(TryReadFile, ASymlinkIsRefusedUnlessLinksAreFollowed) {
  TempDir tmp;
  test::write_file(tmp / "real.h", "int x;\n");
  stdfs::create_symlink(tmp / "real.h", tmp / "link.h");
  stdfs::create_symlink(tmp / "gone.h", tmp / "dangling.h");
  const std::string error = error_of([&] { try_read_file(tmp / "link.h"); });
  EXPECT_NE(error.find("link.h is a symlink; refusing to follow it"), std::string::npos) << error;
  EXPECT_THROW(read_file(tmp / "link.h"), Error);

  EXPECT_EQ(try_read_file(tmp / "link.h", Links::follow), std::optional<std::string>("int x;\n"));
  EXPECT_FALSE(try_read_file(tmp / "dangling.h", Links::follow)) << "a link to nothing: absent";
}

}  // namespace
}  // namespace apexnpu
