#include "tuner/shard.hpp"

#include <charconv>

#include "core/error.hpp"

namespace tuner {

namespace {

// A positive int without sign, spaces or leading zeros; -1 otherwise.
int parse_count(std::string_view text) {
  if (text.empty() || (text.size() > 1 && text.front() == '0')) return -1;
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 1) return -1;
  return value;
}

}  // namespace

std::string ShardSpec::text() const { return std::to_string(index) + "/" + std::to_string(count); }

ShardSpec parse_shard(std::string_view text, std::string_view option) {
  const std::string fix = std::string(option) + " takes i/N with 1 <= i <= N (e.g. " +
                          std::string(option) + " 3/8 for the third of eight shards)";
  const std::size_t slash = text.find('/');
  if (slash == std::string_view::npos) {
    throw InputError(std::string(option) + " '" + std::string(text) + "' is not i/N: " + fix);
  }
  const int index = parse_count(text.substr(0, slash));
  const int count = parse_count(text.substr(slash + 1));
  if (index < 1 || count < 1) {
    throw InputError(std::string(option) + " '" + std::string(text) + "' is not i/N: " + fix);
  }
  if (index > count) {
    throw InputError(std::string(option) + " '" + std::string(text) + "': shard " +
                     std::to_string(index) + " is out of range for " + std::to_string(count) +
                     " shards: " + fix);
  }
  return ShardSpec{index, count};
}

int shard_of(std::string_view item_key, int count) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (const char c : item_key) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ULL;
  }
  return static_cast<int>(hash % static_cast<std::uint64_t>(count)) + 1;
}

std::string plan_work(std::string_view family, std::string_view shape, std::string_view arch,
                      bool allow_spills) {
  return "plan family=" + std::string(family) + " shape=" + std::string(shape) +
         " arch=" + std::string(arch) + (allow_spills ? " allow_spills" : "");
}

std::string sweep_work(std::string_view family, std::string_view shape,
                       std::string_view budget_arch, const std::vector<int>& batches) {
  std::string text = "sweep family=" + std::string(family) + " shape=" + std::string(shape) +
                     " budget_arch=" + std::string(budget_arch) + " batches=";
  for (std::size_t i = 0; i < batches.size(); ++i) {
    text += (i ? "," : "") + std::to_string(batches[i]);
  }
  return text;
}

std::string sweep_item_key(std::string_view shape, int batch, std::string_view params_json) {
  return std::string(shape) + "|" + std::to_string(batch) + "|" + std::string(params_json);
}

}  // namespace tuner
