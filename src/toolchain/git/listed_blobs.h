#pragma once
// Reading the contents of listed blobs into a tree, the same way for each repository reader:
// inflating is most of the work, so a few threads of the job pool share it, each through a reader
// of its own (libgit2's handles are not shared between threads).
#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/file_tree.h"
#include "core/job_pool.h"
#include "git/blob_listing.h"

namespace apexnpu::git {

// make_reader() is called once per thread that reads, and returns a callable (path, BlobRef) ->
// FileEntry; either may throw Error. On failure, the first listed path that failed is the one
// reported (the job pool's rule: the listing is in path order).
template <typename MakeReader>
FileTree read_listed_blobs(const BlobListing& listing, std::size_t threads, MakeReader&& make_reader) {
  std::vector<const BlobListing::value_type*> blobs;
  blobs.reserve(listing.size());
  for (const auto& item : listing) blobs.push_back(&item);
  std::vector<FileEntry> contents(blobs.size());
  std::vector<std::optional<decltype(make_reader())>> readers(std::max<std::size_t>(threads, 1));
  const core::PoolOutcome outcome =
      core::run_pool(blobs.size(), threads, [&](std::size_t i, std::size_t worker) {
        auto& read = readers[worker];
        if (!read) read.emplace(make_reader());
        contents[i] = (*read)(blobs[i]->first, blobs[i]->second);
      });
  if (!outcome.failures.empty())
    throw Error(outcome.failures.front().what,
                "the repository is damaged or incomplete: fetch or clone it again (git fsck names "
                "what is wrong)");
  FileTree files;
  for (std::size_t i = 0; i < blobs.size(); ++i)
    files.emplace_hint(files.end(), blobs[i]->first, std::move(contents[i]));
  return files;
}

}  // namespace apexnpu::git
