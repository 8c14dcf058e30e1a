// wheel::core_metadata_problems and the grammars under it (pep508.h): what an index accepts
// passes, and each kind of invalid field is named.
#include "wheel/core_metadata.h"

#include <gtest/gtest.h>

#include "wheel/pep508.h"

namespace apexnpu::wheel {
namespace {

const std::string kValid =
    "Metadata-Version: 2.1\n"
    "Name: torch_npu_emulator\n"
    "Version: 0.1+ascend\n"
    "Summary: one line\n"
    "License: BSD-3-Clause\n"
    "Platform: any\n"
    "Requires-Python: >=3.7,<3.14\n"
    "Requires-Dist: apex (==0.1+ascend)\n"
    "Requires-Dist: torch\n"
    "Requires-Dist: numpy[extra1, extra2] >= 1.21 ; python_version >= '3.8' and (os_name == \"posix\" or "
    "extra == 'x')\n"
    "Requires-Dist: pkg @ https://example.invalid/pkg.whl\n"
    "Provides-Extra: extra1\n"
    "Description-Content-Type: text/markdown; charset=UTF-8; variant=GFM\n"
    "\n"
    "# A body: anything: goes here\n";

// Expects exactly one problem containing `needle` once `line` replaces kValid's first line of
// the same field, or is added to its headers (`add`, or a field kValid lacks).
void expect_problem(const std::string& line, const std::string& needle, bool add = false) {
  std::string text = kValid;
  const auto colon = line.find(':');
  std::string field = "\n";
  field.append(line, 0, colon == std::string::npos ? 0 : colon + 1);
  const auto same = colon == std::string::npos ? std::string::npos : text.find(field);
  if (add || same == std::string::npos) {
    const auto end = text.find("\n\n") + 1;
    text = text.substr(0, end) + line + "\n" + text.substr(end);
  } else {
    text.replace(same + 1, text.find('\n', same + 1) - same - 1, line);
  }
  const auto problems = core_metadata_problems(text);
  ASSERT_EQ(problems.size(), 1u) << line << (problems.empty() ? "" : "\n" + problems[0]);
  EXPECT_NE(problems[0].find(needle), std::string::npos) << problems[0];
}

TEST(CoreMetadata, ValidMetadataHasNoProblem) {
  const auto problems = core_metadata_problems(kValid);
  EXPECT_TRUE(problems.empty()) << problems.front();
}

TEST(CoreMetadata, EachInvalidFieldIsNamed) {
  expect_problem("Requires-Python: >=3.7,<<3.14", "Requires-Python: '>=3.7,<<3.14' is invalid");
  expect_problem("Requires-Python: >= three", "'three' is not a valid version for >=");
  expect_problem("Requires-Python: ~=3", "~= needs a version of two parts");
  expect_problem("Requires-Dist: torch (>=1.13", "'(' is not closed");
  expect_problem("Requires-Dist: -torch", "does not start with a valid project name");
  expect_problem("Requires-Dist: torch; python_ver >= '3'", "neither a marker variable");
  expect_problem("Requires-Dist: torch >=1.13+local", "not a valid version for >=");
  expect_problem("Provides-Extra: no spaces", "not a valid extra name");
  expect_problem("Description-Content-Type: text/html", "not text/plain, text/x-rst or text/markdown");
  expect_problem("Requires-Torch: 1.13", "'Requires-Torch' is not a core metadata field");
  expect_problem("Version: 0.2", "Version is given more than once", true);
  expect_problem("License-Expression: BSD-3-Clause", "Metadata-Version 2.4 field, but METADATA declares 2.1");
  expect_problem("Summary: two\n lines", "a summary is one line");
  expect_problem("no colon here", "is not a 'Field: value' header");
}

TEST(CoreMetadata, NameVersionAndMetadataVersion) {
  EXPECT_EQ(core_metadata_problems("Metadata-Version: 3.0\nName: a\nVersion: 1\n").size(), 1u);
  EXPECT_EQ(core_metadata_problems("Metadata-Version: 2.1\nName: apex npu\nVersion: 1\n").size(), 1u);
  EXPECT_EQ(core_metadata_problems("Metadata-Version: 2.1\nName: apex\nVersion: 0.1-ascend!\n").size(), 1u);
  const auto dynamic =
      core_metadata_problems("Metadata-Version: 2.2\nName: a\nVersion: 1\nDynamic: Version\n");
  ASSERT_EQ(dynamic.size(), 1u);
  EXPECT_NE(dynamic[0].find("Version cannot be dynamic"), std::string::npos) << dynamic[0];
}

TEST(Pep440, VersionsInTheirAcceptedSpellings) {
  for (const char* v : {"0.1", "0.1+ascend", "1!2.0", "v1.0", "1.0rc1", "1.0-rc.1", "1.0.post2", "1.0-2",
                        "1.0.dev3", "1.0a1.post2.dev3+local.7", "1.0RC1"})
    EXPECT_TRUE(valid_version(v)) << v;
  for (const char* v : {"", "1.", ".1", "1.0+", "1.0+local..x", "one", "1.0 beta"})
    EXPECT_FALSE(valid_version(v)) << v;
}

TEST(Pep440, SpecifiersTakeTheVersionsTheirOperatorAllows) {
  for (const char* s :
       {"", ">=3.7,<3.14", "==1.0.*", "!=1.0+local", "~=1.4", "===anything", " >= 1.0 , != 1.3 "})
    EXPECT_FALSE(specifier_set_problem(s)) << s;
  for (const char* s : {">=1.0.*", "<1.0+local", "~=1", "=>1.0", "1.0", ">=", ">=1.0,", "==1.*.0"})
    EXPECT_TRUE(specifier_set_problem(s)) << s;
}

}  // namespace
}  // namespace apexnpu::wheel
