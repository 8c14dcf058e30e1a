#pragma once
// An Apex-like upstream for the integration tests: a few Python files, a CRLF file, an
// executable script and a file without a final newline, over two commits, a tag and a branch.
#include <string>
#include <vector>

#include "integration/support.h"

namespace apexnpu::test {

std::string numbered_lines(const std::string& prefix, int count, const std::string& eol = "\n");

struct ApexLikeUpstream {
  // The repository goes to <dir>/upstream; copies of its files at each commit to
  // <dir>/at-first and <dir>/at-second (for running GNU patch on the same input).
  explicit ApexLikeUpstream(const stdfs::path& dir);

  FixtureRepo repo;
  stdfs::path at_first;
  stdfs::path at_second;
  std::string first;   // the first commit (tagged v1 annotated, v1-light lightweight)
  std::string second;  // lines inserted above the patched places, context edited (branch "dev")
};

// The arguments of `apexnpu gen` over `upstream` at `ref`, with `patch` and `overlay`, into `out`.
std::vector<std::string> gen_args(const ApexLikeUpstream& upstream, const std::string& ref,
                                  const stdfs::path& patch, const stdfs::path& overlay,
                                  const stdfs::path& out);

// `diff -Nur a b` run in `parent` (GNU diff, the way Ascend's patch is written).
std::string gnu_diff(const stdfs::path& parent, const std::string& a, const std::string& b);

// Applies `patch_file` with GNU patch -p1 in `dir`; returns GNU's exit code.
int gnu_patch(const stdfs::path& dir, const stdfs::path& patch_file);

}  // namespace apexnpu::test
