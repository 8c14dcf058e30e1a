#pragma once
// The object cache's keys for a compilation and for a link (see object_cache.h for the two-step
// object key). Every existing cache entry is found by this material, so it must not change;
// a change of meaning takes a new version tag ("apexnpu-object-v2"), which orphans the old
// entries instead of mistaking them for new ones.
#include <string>
#include <vector>

#include "compile/compiler.h"

namespace apexnpu::compile {

// The source key of one compilation: `argv` is the command up to and including "-c" (no
// output paths), `source` names what is compiled (its path, or "unity:<name>" for a batch),
// `text` is the bytes compiled.
std::string object_source_key(const Compiler& compiler, std::vector<std::string> argv,
                              const std::string& source, const std::string& key_extra,
                              const std::string& text);

// The key of a linked module: `argv` is the link command before "-o", `object_keys` the keys of
// the objects it links, in link order.
std::string module_link_key(const Compiler& compiler, const std::vector<std::string>& argv,
                            const std::vector<std::string>& object_keys);

}  // namespace apexnpu::compile
