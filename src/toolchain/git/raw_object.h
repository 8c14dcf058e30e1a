#pragma once
// An object as the repository stores it: its type and its bytes (after inflating and deltas).
#include <memory>
#include <string>

namespace apexnpu::git {

// The values are git's own type numbers (packs store them).
enum class ObjectType { commit = 1, tree = 2, blob = 3, tag = 4 };

struct RawObject {
  ObjectType type;
  std::string data;
};

// Objects are shared: a delta base serves many objects, and readers run on several threads.
using SharedObject = std::shared_ptr<const RawObject>;

}  // namespace apexnpu::git
