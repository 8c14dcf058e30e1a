#pragma once
// The wheel's version: "0.1+<label>", a PEP 440 local version. The label is checked here
// because a bad one makes an uninstallable wheel: the original "0.1-ascend" is exactly the
// form setuptools >= 66 rejects, and a '-' in a wheel file name part breaks the name's parsing.
#include <string>
#include <string_view>

namespace apexnpu::wheel {

inline constexpr std::string_view kPublicVersion = "0.1";
inline constexpr std::string_view kDefaultLocalLabel = "ascend";

// Returns the normalised label (lower case) or throws UsageError naming --version-label.
std::string validate_local_label(std::string_view label);

// "0.1+ascend"
std::string wheel_version(std::string_view label);

// Distribution name as it appears in file names: runs of anything but [A-Za-z0-9.] become '_'.
std::string escape_file_name_part(std::string_view part);

std::string dist_info_dir(std::string_view name, std::string_view version);  // apex-0.1+ascend.dist-info
std::string wheel_file_name(std::string_view name, std::string_view version, std::string_view tag);

}  // namespace apexnpu::wheel
