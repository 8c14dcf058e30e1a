#include "compile/cache_keys.h"

#include "core/sha256.h"

namespace apexnpu::compile {

namespace {

// NUL-terminated fields: no two lists of strings give the same material.
std::string join0(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& a : v) {
    s += a;
    s.push_back('\0');
  }
  return s;
}

}  // namespace

std::string object_source_key(const Compiler& compiler, std::vector<std::string> argv,
                              const std::string& source, const std::string& key_extra,
                              const std::string& text) {
  argv.push_back(source);
  return sha256_hex(join0({"apexnpu-object-v1", compiler.version, join0(argv), key_extra, text}));
}

std::string module_link_key(const Compiler& compiler, const std::vector<std::string>& argv,
                            const std::vector<std::string>& object_keys) {
  std::string material = join0({"apexnpu-module-v1", compiler.version, join0(argv)});
  for (const auto& key : object_keys) material += key + '\0';
  return sha256_hex(material);
}

}  // namespace apexnpu::compile
