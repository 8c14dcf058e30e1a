// The object cache's key material, spelled out byte by byte: a refactoring that changed it would
// silently orphan every existing cache (each object compiled again, the old ones left behind).
#include "compile/cache_keys.h"

#include <gtest/gtest.h>

#include <string>

#include "core/sha256.h"

namespace apexnpu::compile {
namespace {

using namespace std::string_literals;

TEST(CacheKeys, ObjectSourceKeyMaterialIsUnchanged) {
  const Compiler cxx{{"c++"}, "c++ (Debian 12.2.0-14) 12.2.0"};
  const std::string key = object_source_key(cxx, {"c++", "-O3", "-c"}, "/rt/core/a.cpp",
                                            "python 3.11.2 /usr/include/python3.11", "int a;\n");
  EXPECT_EQ(key, sha256_hex("apexnpu-object-v1\0"s
                            "c++ (Debian 12.2.0-14) 12.2.0\0"s
                            "c++\0-O3\0-c\0/rt/core/a.cpp\0\0"s
                            "python 3.11.2 /usr/include/python3.11\0"s
                            "int a;\n\0"s));
}

TEST(CacheKeys, ModuleLinkKeyMaterialIsUnchanged) {
  const Compiler cxx{{"ccache", "g++"}, "g++ 12"};
  const std::string key = module_link_key(cxx, {"ccache", "g++", "-shared"}, {"k1", "k2"});
  EXPECT_EQ(key, sha256_hex("apexnpu-module-v1\0"s
                            "g++ 12\0"s
                            "ccache\0g++\0-shared\0\0"s
                            "k1\0k2\0"s));
}

}  // namespace
}  // namespace apexnpu::compile
