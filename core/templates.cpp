#include "core/templates.hpp"

#include "core/embedded_templates.hpp"
#include "core/hash.hpp"

namespace tuner {

std::vector<SourceFile> template_files(const std::vector<std::string>& folders) {
  std::vector<SourceFile> files;
  for (const EmbeddedFile& file : embedded_templates()) {
    for (const std::string& folder : folders) {
      if (file.path.substr(0, folder.size()) == folder) {
        files.push_back(SourceFile{std::string(file.path), std::string(file.text)});
        break;
      }
    }
  }
  return files;
}

std::string templates_hash(const std::vector<std::string>& folders) {
  std::string all;
  for (const SourceFile& file : template_files(folders)) {
    all += file.name;
    all += '\0';
    all += file.text;
    all += '\0';
  }
  return sha256_hex(all);
}

}  // namespace tuner
