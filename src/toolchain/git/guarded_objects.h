#pragma once
// A repository opened with libgit2, its object database assembled from libgit2's own backends
// (loose objects, and each pack on its own), each behind a guard that checks what libgit2 1.5.1
// would mis-read before it reads it: loose objects whose zlib data or size claim is wrong
// (loose_object_check.h), pack indexes that point outside their pack and delta chains that
// loop (pack_check.h). A refused object fails the read with an error naming the file and the
// damage. Alternates are followed once each (alternates.h). Every read of a repository goes
// through here; libgit2 keeps checking each object's content against its id.
#include <filesystem>

#include "git/libgit2.h"

namespace apexnpu::git {

// The repository at `path` (a work tree, its .git, or a bare repository; no search upwards).
// Throws Error naming `path` when it is not one, or naming a damaged pack index.
Repository open_repository(const std::filesystem::path& path);

}  // namespace apexnpu::git
