#pragma once
// One "@@ -a,b +c,d @@" hunk and its lines, read as GNU patch 2.7 reads them: the header's
// counts decide where the hunk ends, and a hunk whose body does not fit them is malformed.
#include "patch/patch_lines.h"
#include "patch/patch_model.h"

namespace apexnpu::patch {

// Reads the hunk whose header is lines[index] and moves `index` past it (and past a
// "\ No newline at end of file" marker on its last line). Throws, naming the line, for a
// malformed header, a body that does not match the counts, a marker inside the hunk, or a hunk
// that changes nothing.
Hunk parse_hunk(const PatchLines& lines, std::size_t& index);

}  // namespace apexnpu::patch
