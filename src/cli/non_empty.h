#pragma once
// Empty option values are refused (exit 2) rather than taken for "the default": `--upstream ''`
// used to become the default URL (and go to the network), `--ref ''` the pinned commit.
#include <CLI/CLI.hpp>
#include <string>

namespace apexnpu::cli {

inline const CLI::Validator& non_empty() {
  static const CLI::Validator validator(
      [](std::string& value) {
        return value.empty() ? std::string("the value is empty; leave the option out for its default")
                             : std::string();
      },
      "", "NON_EMPTY");
  return validator;
}

}  // namespace apexnpu::cli
