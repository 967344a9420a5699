#include "tuner/batch_set.hpp"

#include <algorithm>
#include <charconv>
#include <utility>

#include "core/error.hpp"

namespace tuner {

namespace {

constexpr int kLargestBatch = 1 << 20;  // a guard against typos, far above any captured size

const char* const kForms =
    "write batches (37), ranges (1-16, or 8-64:8 for every 8th), 'cudagraph', 'waves' or "
    "'clusters', separated by commas";

int batch_value(const std::string& text, const std::string& item) {
  int value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || ptr != end) {
    throw InputError("--batches item '" + item + "' is not a batch size: " + kForms);
  }
  if (value < 1 || value > kLargestBatch) {
    throw InputError("--batches item '" + item + "': batch sizes go from 1 to " +
                     std::to_string(kLargestBatch));
  }
  return value;
}

// "A-B" or "A-B:S".
void add_range(const std::string& item, std::vector<int>& batches) {
  const std::size_t dash = item.find('-');
  const std::size_t colon = item.find(':');
  const int first = batch_value(item.substr(0, dash), item);
  const int last = batch_value(
      item.substr(dash + 1, colon == std::string::npos ? std::string::npos : colon - dash - 1),
      item);
  const int step = colon == std::string::npos ? 1 : batch_value(item.substr(colon + 1), item);
  if (last < first) {
    throw InputError("--batches range '" + item + "' ends before it starts: write it low-high");
  }
  for (int batch = first; batch <= last; batch += step) batches.push_back(batch);
}

}  // namespace

std::vector<int> cudagraph_batches(int max_batch) {
  std::vector<int> batches{1, 2, 4};
  for (int batch = 8; batch < 256; batch += 8) batches.push_back(batch);
  for (int batch = 256; batch <= 512; batch += 16) batches.push_back(batch);
  batches.erase(std::upper_bound(batches.begin(), batches.end(), max_batch), batches.end());
  return batches;
}

std::string batch_list_text(const std::vector<int>& batches) {
  std::string text;
  for (const int batch : batches) {
    if (!text.empty()) text += ',';
    text += std::to_string(batch);
  }
  return text;
}

std::vector<int> merged_batches(std::vector<int> batches, const std::vector<int>& more) {
  batches.insert(batches.end(), more.begin(), more.end());
  std::sort(batches.begin(), batches.end());
  batches.erase(std::unique(batches.begin(), batches.end()), batches.end());
  return batches;
}

BatchSet parse_batch_set(const std::string& text, int max_batch) {
  BatchSet set;
  set.max_batch = max_batch;
  std::vector<int>& batches = set.batches;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string item =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item == "waves") {
      set.wave_edges = true;
    } else if (item == "clusters") {
      set.cluster_edges = true;
    } else if (item == "cudagraph") {
      const std::vector<int> captured = cudagraph_batches(max_batch);
      batches.insert(batches.end(), captured.begin(), captured.end());
    } else if (item.find('-') != std::string::npos) {
      add_range(item, batches);
    } else {
      batches.push_back(batch_value(item, item));
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  const bool named = set.wave_edges || set.cluster_edges;
  if (max_batch < 1 && (named || text.find("cudagraph") != std::string::npos)) {
    throw InputError("--batches names 'cudagraph', 'waves' or 'clusters' with --max-batch " +
                     std::to_string(max_batch) + ": raise --max-batch to 1 or more");
  }
  if (batches.empty() && !named) {
    throw InputError("--batches '" + text + "' names no batch: " + kForms);
  }
  batches = merged_batches(std::move(batches), {});
  return set;
}

BatchSet parse_default_batch_set(const std::string& text, int max_batch) {
  BatchSet set = parse_batch_set(text, max_batch);
  std::erase_if(set.batches, [&](int batch) { return batch > max_batch; });
  return set;
}

}  // namespace tuner
