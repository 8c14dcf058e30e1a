#pragma once
// A commit's files by path as its tree objects list them, before any content is read.
#include <git2/oid.h>

#include <map>
#include <string>

#include "core/file_tree.h"

namespace apexnpu::git {

// A blob of a tree without its content: its object id and what kind of file it is.
struct BlobRef {
  git_oid id;
  FileKind kind;
};
using BlobListing = std::map<std::string, BlobRef>;

}  // namespace apexnpu::git
