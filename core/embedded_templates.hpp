#pragma once
// The device-side sources under templates/, embedded at build time (cmake/EmbedTemplates.cmake).
#include <string_view>
#include <vector>

namespace tuner {

struct EmbeddedFile {
  std::string_view path;  // relative to templates/, e.g. "<family>/kernel.cuh"
  std::string_view text;
};

const std::vector<EmbeddedFile>& embedded_templates();

}  // namespace tuner
