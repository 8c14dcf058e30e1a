#include "compile/object_cache.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/sha256.h"
#include "fs/file_io.h"

namespace apexnpu::compile {
namespace stdfs = std::filesystem;

stdfs::path default_cache_dir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && *x == '/')
    return stdfs::path(x) / "apexnpu" / "objects";
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0')
    return stdfs::path(home) / ".cache" / "apexnpu" / "objects";
  return stdfs::temp_directory_path() / "apexnpu-cache" / "objects";
}

std::vector<std::string> parse_depfile(const std::string& text) {
  std::vector<std::string> deps;
  std::string word;
  bool after_colon = false;
  auto flush = [&] {
    if (!word.empty() && after_colon) deps.push_back(word);
    word.clear();
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\\' && i + 1 < text.size()) {
      const char next = text[i + 1];
      if (next == '\n') {
        flush();
        ++i;
        continue;
      }
      if (next == ' ' || next == '#' || next == '\\') {
        word += next;
        ++i;
        continue;
      }
    }
    if (c == '$' && i + 1 < text.size() && text[i + 1] == '$') {
      word += '$';
      ++i;
      continue;
    }
    if (!after_colon && c == ':' && (i + 1 == text.size() || text[i + 1] == ' ' || text[i + 1] == '\n')) {
      word.clear();
      after_colon = true;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      flush();
      if (c == '\n') after_colon = false;  // a new rule (-MP phony targets) starts
      continue;
    }
    word += c;
  }
  flush();
  return deps;
}

namespace {

// Scratch files and folders in tmp/ are named <pid>-...: those of builds that are gone (killed
// mid-compile) are removed.
void remove_scratch_of_gone_builds(const stdfs::path& tmp) {
  std::error_code ec;
  for (stdfs::directory_iterator it(tmp, ec), end; !ec && it != end; it.increment(ec)) {
    const long pid = std::strtol(it->path().filename().c_str(), nullptr, 10);
    if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
      std::error_code ignored;
      stdfs::remove_all(it->path(), ignored);
    }
  }
}

}  // namespace

// Absolute: the compiler runs in the runtime's folder and is handed paths into the cache.
ObjectCache::ObjectCache(stdfs::path root) : root_(stdfs::absolute(root).lexically_normal()) {
  std::error_code ec;
  for (const char* sub : {"o", "so", "manifests", "tmp", "locks"}) {
    stdfs::create_directories(root_ / sub, ec);
    if (ec)
      throw Error(fmt::format("cannot create the object cache {}: {}", (root_ / sub).string(), ec.message()),
                  "pass --object-cache DIR, or set XDG_CACHE_HOME to a writable directory");
  }
  remove_scratch_of_gone_builds(root_ / "tmp");
}

stdfs::path ObjectCache::scratch_path(const std::string& extension) const {
  return root_ / "tmp" / (unique_suffix() + extension);
}

stdfs::path ObjectCache::object_path(const std::string& key) const {
  return root_ / "o" / key.substr(0, 2) / (key + ".o");
}

stdfs::path ObjectCache::manifest_path(const std::string& key) const {
  return root_ / "manifests" / key.substr(0, 2) / (key + ".json");
}

std::string ObjectCache::file_hash(const std::string& path) {
  {
    std::lock_guard lock(mutex_);
    if (auto it = file_hashes_.find(path); it != file_hashes_.end()) return it->second;
  }
  // Through links: a header is what the compiler read, and it reads through them (some of
  // Debian's /usr/include headers are links). One that is gone hashes as "missing", which
  // matches no recorded hash; one that is there but cannot be read is an Error.
  const auto bytes = try_read_file(path, Links::follow);
  const std::string h = bytes ? sha256_hex(*bytes) : std::string("missing");
  std::lock_guard lock(mutex_);
  file_hashes_[path] = h;
  return h;
}

namespace {

// A manifest as store_object writes it: {"object": key, "headers": [[path, sha256], ...]}.
bool is_manifest(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("object") || !j.at("object").is_string() || !j.contains("headers") ||
      !j.at("headers").is_array())
    return false;
  for (const auto& dep : j.at("headers"))
    if (!dep.is_array() || dep.size() != 2 || !dep.at(0).is_string() || !dep.at(1).is_string()) return false;
  return true;
}

}  // namespace

std::optional<stdfs::path> ObjectCache::lookup_object(const std::string& source_key) {
  const auto text = try_read_file(manifest_path(source_key));
  if (!text) return std::nullopt;
  // A damaged manifest (cut short, or of another shape) is a miss, and is rewritten by the next
  // store: parsed without exceptions, it is a value to look at, not an error.
  const auto j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!is_manifest(j)) return std::nullopt;
  for (const auto& dep : j.at("headers"))
    if (file_hash(dep.at(0).get<std::string>()) != dep.at(1).get<std::string>()) return std::nullopt;
  const stdfs::path object = object_path(j.at("object").get<std::string>());
  std::error_code ec;
  if (!stdfs::is_regular_file(object, ec)) return std::nullopt;
  return object;
}

std::pair<std::string, stdfs::path> ObjectCache::store_object(const std::string& source_key,
                                                              const stdfs::path& object,
                                                              const std::string& depfile_text,
                                                              const std::string& not_recorded) {
  nlohmann::json headers = nlohmann::json::array();
  Sha256 key;
  key.update(source_key);
  for (const auto& dep : parse_depfile(depfile_text)) {
    if (!not_recorded.empty() && dep == not_recorded) continue;
    const std::string h = file_hash(dep);
    headers.push_back({dep, h});
    key.update(dep).update(std::string_view("\0", 1)).update(h);
  }
  const std::string object_key = to_hex(key.finish());
  const stdfs::path stored = object_path(object_key);
  std::error_code ec;
  stdfs::create_directories(stored.parent_path(), ec);
  stdfs::rename(object, stored, ec);
  if (ec) throw Error(fmt::format("cannot store {} in the cache: {}", stored.string(), ec.message()));
  const stdfs::path manifest = manifest_path(source_key);
  stdfs::create_directories(manifest.parent_path(), ec);
  write_file_atomic(manifest, nlohmann::json{{"object", object_key}, {"headers", headers}}.dump());
  return {object_key, stored};
}

ObjectCache::KeyLock::KeyLock(const ObjectCache& cache, const std::string& key) {
  const stdfs::path path = cache.root_ / "locks" / (key.substr(0, 16) + ".lock");
  fd_ = ::open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  // Without a lock file the build still works, only without the de-duplication.
  if (fd_ >= 0)
    while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
    }
}

ObjectCache::KeyLock::~KeyLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the flock
}

std::optional<stdfs::path> ObjectCache::lookup_module(const std::string& link_key) const {
  const stdfs::path p = root_ / "so" / link_key.substr(0, 2) / (link_key + ".so");
  std::error_code ec;
  if (stdfs::is_regular_file(p, ec)) return p;
  return std::nullopt;
}

stdfs::path ObjectCache::store_module(const std::string& link_key, const stdfs::path& module) {
  const stdfs::path p = root_ / "so" / link_key.substr(0, 2) / (link_key + ".so");
  std::error_code ec;
  stdfs::create_directories(p.parent_path(), ec);
  stdfs::rename(module, p, ec);
  if (ec) throw Error(fmt::format("cannot store {} in the cache: {}", p.string(), ec.message()));
  return p;
}

}  // namespace apexnpu::compile
