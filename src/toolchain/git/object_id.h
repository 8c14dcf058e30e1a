#pragma once
// Object ids compared without a call into libgit2 (which is loaded only when first needed).
#include <git2/oid.h>

#include <cstring>

namespace apexnpu::git {

inline bool same_id(const git_oid& a, const git_oid& b) { return std::memcmp(a.id, b.id, sizeof a.id) == 0; }

}  // namespace apexnpu::git
