#pragma once
// A family's view of the embedded templates: the files under its own folders (and common/), as
// NVRTC headers and as one content hash, so that an edit to one family's device code changes only
// that family's source hash.
#include <string>
#include <vector>

#include "core/nvrtc.hpp"

namespace tuner {

// Every embedded file whose path starts with one of `folders` ("common/", "fp8_gemm/").
std::vector<SourceFile> template_files(const std::vector<std::string>& folders);

// SHA-256 (hex) over those files' paths and texts.
std::string templates_hash(const std::vector<std::string>& folders);

}  // namespace tuner
