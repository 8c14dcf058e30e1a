#pragma once
// Unity batches: several runtime sources compiled as one translation unit, a generated file
// that #includes them. Most of a runtime file's compile time is parsing the standard and
// intrinsic headers, so a batch parses them once for all its members (a cold build of the
// runtime drops from about 60 s of CPU to about 16). build.json's "unity" says how many batches
// each group of sources gets; a member's names in anonymous namespaces must then be unique
// within its batch.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace apexnpu::compile {

// Splits `sources` (kept in their order) into at most `batches` contiguous runs of about equal
// total weight. Contiguous runs keep batches stable: editing one file moves at most a boundary.
// batches == 0 means no batching: every source alone.
std::vector<std::vector<std::string>> split_into_batches(
    const std::vector<std::string>& sources, std::size_t batches,
    const std::function<std::uintmax_t(const std::string&)>& weight);

// The generated translation unit: one #include per member, relative to an include directory.
std::string unity_source_text(const std::vector<std::string>& members);

}  // namespace apexnpu::compile
