#pragma once
// METADATA as an index reads it (the core metadata specification): every field known and
// allowed by the declared Metadata-Version, single-valued fields given once, and the values
// written in their grammars (Name, Version, Requires-Python, Requires-Dist, Provides-Extra,
// Description-Content-Type, a one-line Summary). `twine check` refuses an upload for each of
// these, so `apexnpu verify` does too.
#include <string>
#include <vector>

namespace apexnpu::wheel {

// One message per problem, each naming the field (empty: valid). Missing required fields are
// left to the caller, which names them with the wheel's other problems.
std::vector<std::string> core_metadata_problems(const std::string& text);

}  // namespace apexnpu::wheel
