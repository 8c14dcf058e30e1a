#include "integration/fixture.h"

#include <fmt/core.h>

namespace apexnpu::test {

std::string numbered_lines(const std::string& prefix, int count, const std::string& eol) {
  std::string s;
  for (int i = 1; i <= count; ++i) s += fmt::format("{} line {}{}", prefix, i, eol);
  return s;
}

ApexLikeUpstream::ApexLikeUpstream(const stdfs::path& dir)
    : repo(dir / "upstream"), at_first(dir / "at-first"), at_second(dir / "at-second") {
  repo.write("apex/__init__.py", "# apex\n" + numbered_lines("init", 20));
  repo.write("apex/amp/frontend.py", numbered_lines("frontend", 60));
  repo.write("apex/optimizers/__init__.py", numbered_lines("optimizers", 8));
  repo.write("csrc/windows.cpp", numbered_lines("crlf", 30, "\r\n"));
  repo.write("tools/build.sh", "#!/bin/sh\n" + numbered_lines("# build", 12), true);
  repo.write("README", numbered_lines("readme", 10) + "last line without newline");
  first = repo.commit("first");
  repo.tag("v1", first, true);
  repo.tag("v1-light", first, false);
  copy_work_tree(repo.dir(), at_first);

  // Second commit: lines inserted near the top (so hunks land at an offset) and one context
  // line edited (so a hunk needs fuzz).
  repo.write("apex/amp/frontend.py", numbered_lines("inserted", 7) + numbered_lines("frontend", 60));
  std::string init = "# apex\n" + numbered_lines("init", 20);
  const std::string old_line = "init line 7\n";
  init.replace(init.find(old_line), old_line.size(), "init line 7 (edited upstream)\n");
  repo.write("apex/__init__.py", init);
  second = repo.commit("second");
  repo.branch("dev", second);
  copy_work_tree(repo.dir(), at_second);
}

std::string gnu_diff(const stdfs::path& parent, const std::string& a, const std::string& b) {
  const RunResult r = run_process("diff", {"-Nur", a, b}, {"LC_ALL=C", "TZ=UTC"}, parent);
  if (r.exit_code > 1) throw std::runtime_error("diff failed: " + r.err);
  return r.out;
}

int gnu_patch(const stdfs::path& dir, const stdfs::path& patch_file) {
  return run_process("patch",
                     {"-p1", "--batch", "--forward", "--no-backup-if-mismatch", "--reject-file=-", "-s", "-i",
                      patch_file.string()},
                     {"LC_ALL=C"}, dir)
      .exit_code;
}

std::vector<std::string> gen_args(const ApexLikeUpstream& upstream, const std::string& ref,
                                  const stdfs::path& patch, const stdfs::path& overlay,
                                  const stdfs::path& out) {
  return {"gen",          "--upstream", upstream.repo.dir().string(),
          "--ref",        ref,          "--patch",
          patch.string(), "--overlay",  overlay.string(),
          "-o",           out.string()};
}

}  // namespace apexnpu::test
