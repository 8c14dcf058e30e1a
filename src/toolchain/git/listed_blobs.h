#pragma once
// Reading the contents of listed blobs into a tree, the same way for each repository reader:
// inflating is most of the work, so a few threads share it, each through a reader of its own
// (libgit2's handles are not shared between threads).
#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/file_tree.h"
#include "git/blob_listing.h"

namespace apexnpu::git {

// make_reader() is called once per thread and returns a callable (path, BlobRef) -> FileEntry;
// either may throw Error. On failure, the first listed path that failed is the one reported.
template <typename MakeReader>
FileTree read_listed_blobs(const BlobListing& listing, std::size_t threads, MakeReader&& make_reader) {
  std::vector<const BlobListing::value_type*> blobs;
  blobs.reserve(listing.size());
  for (const auto& item : listing) blobs.push_back(&item);
  threads = std::max<std::size_t>(threads, 1);
  std::vector<FileEntry> contents(blobs.size());
  // Each thread's first failure (the lowest index it failed at): their minimum is the first overall.
  std::vector<std::optional<std::pair<std::size_t, std::string>>> failures(threads);
  auto work = [&](std::size_t first) {
    std::size_t i = first;
    try {
      auto read = make_reader();
      for (; i < blobs.size(); i += threads) contents[i] = read(blobs[i]->first, blobs[i]->second);
    } catch (const Error& e) {
      failures[first].emplace(i, e.what());
    }
  };
  {
    std::vector<std::jthread> workers;
    for (std::size_t t = 1; t < threads; ++t) workers.emplace_back(work, t);
    work(0);
  }
  const std::pair<std::size_t, std::string>* first_failure = nullptr;
  for (const auto& f : failures)
    if (f && (first_failure == nullptr || f->first < first_failure->first)) first_failure = &*f;
  if (first_failure != nullptr)
    throw Error(first_failure->second,
                "the repository is damaged or incomplete: fetch or clone it again (git fsck names "
                "what is wrong)");
  FileTree files;
  for (std::size_t i = 0; i < blobs.size(); ++i)
    files.emplace_hint(files.end(), blobs[i]->first, std::move(contents[i]));
  return files;
}

}  // namespace apexnpu::git
