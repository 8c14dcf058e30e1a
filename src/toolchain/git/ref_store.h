#pragma once
// A repository's references read without libgit2: loose ref files (symbolic or not) and
// packed-refs, under the names git's rev-parse tries for a short name.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "git/object_id.h"

namespace apexnpu::git {

class RefStore {
 public:
  explicit RefStore(std::filesystem::path git_dir);

  // The id the full ref name (e.g. "refs/tags/v1", "HEAD") points to, following symbolic refs;
  // nullopt when there is no such ref or the name is not one git allows.
  std::optional<git_oid> find(std::string_view full_name) const;

  // A short name as `git rev-parse` expands it: NAME (only under refs/ or HEAD-like), refs/NAME,
  // refs/tags/NAME, refs/heads/NAME, refs/remotes/NAME, refs/remotes/NAME/HEAD; the first that
  // exists.
  std::optional<git_oid> dwim(std::string_view name) const;

 private:
  std::optional<git_oid> find(std::string_view full_name, int depth) const;
  std::optional<std::string> packed(std::string_view full_name) const;

  std::filesystem::path git_dir_;
  std::optional<std::string> packed_refs_;  // the file's text, when there is one
};

}  // namespace apexnpu::git
