#pragma once
// The files apex's wheel installs beside the apex package, at the root of site-packages: the
// start-up hook that gives scripts written for Baidu's AIAK-Training, which never import apex,
// AIAK's names (a .pth file, whose `import` line Python's site module runs at start-up, and the
// module that line imports). They are the overlay's, at the root of the tree gen writes; a
// tree without them (--no-overlay, a foreign tree) makes a wheel without them.
#include <array>
#include <filesystem>
#include <string_view>

#include "core/file_tree.h"
#include "wheel/record.h"

namespace apexnpu::wheel {

inline constexpr std::string_view kStartupModule = "_apex_aiak_startup";
inline constexpr std::array<std::string_view, 2> kStartupFiles = {"apex-aiak-startup.pth",
                                                                  "_apex_aiak_startup.py"};

// Adds to `files` those of kStartupFiles that the tree holds as regular files.
void add_startup_files(const FileTree& tree, WheelFiles& files);
void add_startup_files(const std::filesystem::path& tree, WheelFiles& files);

// Whether `files` carry the start-up module (then top_level.txt names it).
bool has_startup_module(const WheelFiles& files);

}  // namespace apexnpu::wheel
