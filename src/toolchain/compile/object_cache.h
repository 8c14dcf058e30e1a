#pragma once
// A content-addressed cache of object files and linked modules, shared by every build.
//
// Key, in two steps (ccache's "direct mode"): the *source key* hashes the compiler version, the
// full command line (minus output paths), the source bytes and any extra key material (the
// target Python's version and include directory for binding sources). It names a small
// manifest listing the headers that source included last time (from the compiler's -MMD
// depfile) with their sha256; when every listed header still has that content, the *object
// key* = sha256(source key, header hashes) names the cached object. We hash -MMD's header list
// rather than `-E` output because running the preprocessor on every rebuild would cost a
// process per source and most of a second per file, while hashing a few headers is
// microseconds: a no-change rebuild then starts no process at all. System headers (-MMD leaves
// them out) are covered by the compiler version in the key.
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace apexnpu::compile {

std::filesystem::path default_cache_dir();  // $XDG_CACHE_HOME/apexnpu/objects, ~/.cache/...

// Parses a make-style depfile ("out.o: a.cpp b.h \\\n c.h") into its prerequisites.
std::vector<std::string> parse_depfile(const std::string& text);

class ObjectCache {
 public:
  explicit ObjectCache(std::filesystem::path root);  // creates the folders; throws Error

  const std::filesystem::path& root() const { return root_; }
  // A fresh path under the cache for a compiler to write to (same file system as the store).
  std::filesystem::path scratch_path(const std::string& extension) const;

  // The cached object for this source key when its recorded headers are unchanged.
  std::optional<std::filesystem::path> lookup_object(const std::string& source_key);
  // Moves `object` into the store, recording the headers named by `depfile_text` except
  // `not_recorded` (a generated source that is part of the source key and then deleted).
  // Returns the object key and the stored path.
  std::pair<std::string, std::filesystem::path> store_object(const std::string& source_key,
                                                             const std::filesystem::path& object,
                                                             const std::string& depfile_text,
                                                             const std::string& not_recorded = {});

  // Held while one source key is being compiled, so concurrent builds sharing the cache (ctest
  // -j, CI jobs) compile each object once: the second waits, then finds it in the cache.
  class KeyLock {
   public:
    KeyLock(const ObjectCache& cache, const std::string& key);
    ~KeyLock();
    KeyLock(const KeyLock&) = delete;
    KeyLock& operator=(const KeyLock&) = delete;

   private:
    int fd_ = -1;
  };

  // Linked modules are cached under a key made from the link command and the object keys.
  std::optional<std::filesystem::path> lookup_module(const std::string& link_key) const;
  std::filesystem::path store_module(const std::string& link_key, const std::filesystem::path& module);
  // The object key of a stored object path (its file stem).
  static std::string key_of(const std::filesystem::path& stored) { return stored.stem().string(); }

 private:
  std::string file_hash(const std::string& path);  // memoised for the lifetime of the cache
  std::filesystem::path object_path(const std::string& key) const;
  std::filesystem::path manifest_path(const std::string& key) const;

  std::filesystem::path root_;
  std::mutex mutex_;
  std::map<std::string, std::string> file_hashes_;
};

}  // namespace apexnpu::compile
