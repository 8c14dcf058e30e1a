#pragma once
// The grammars core metadata fields are written in, as installers and indexes read them:
// PEP 440 versions and version specifiers, PEP 508 project names and dependency specifiers
// (with environment markers). Each check returns why the text is invalid, or nothing.
#include <optional>
#include <string>
#include <string_view>

namespace apexnpu::wheel {

// "0.1+ascend", "v1.0rc1.post2.dev3" (PEP 440, any spelling it normalises).
bool valid_version(std::string_view text);

// A project name or extra: ASCII letters and digits, with '.', '_' or '-' inside.
bool valid_project_name(std::string_view text);

// ">=3.7,<3.14" (an empty set is valid).
std::optional<std::string> specifier_set_problem(std::string_view text);

// "apex (==0.1+ascend)", "torch[opt]>=1.13; python_version >= '3.8'", "pkg @ https://...".
std::optional<std::string> requirement_problem(std::string_view text);

}  // namespace apexnpu::wheel
