#pragma once
// What a fuzzer does when an invariant does not hold: say which and abort, so libFuzzer keeps
// the input as a crash.
#include <cstdio>
#include <cstdlib>
#include <string>

namespace apexnpu::fuzz {

inline void expect(bool holds, const std::string& what) {
  if (holds) return;
  std::fprintf(stderr, "fuzz invariant broken: %s\n", what.c_str());
  std::abort();
}

}  // namespace apexnpu::fuzz
