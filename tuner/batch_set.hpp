#pragma once
// The batch sizes a sweep tunes. Serving stacks capture one CUDA graph per batch size; vLLM's
// default capture list is 1, 2, 4, the multiples of 8 up to 248, then the multiples of 16 up to
// 512 (51 sizes; SGLang's lists are similar), so the named set `cudagraph` is that list.
#include <string>
#include <vector>

namespace tuner {

// vLLM's default CUDA-graph capture sizes up to `max_batch` (51 sizes for 512).
std::vector<int> cudagraph_batches(int max_batch);

// A `--batches` text: comma-separated items, each a batch ("37"), a range ("1-16", every batch;
// "8-64:8", every 8th from 8), the named set "cudagraph" (cudagraph_batches(max_batch)) or the
// named set "waves" (the family's wave-edge batches up to max_batch, Family::wave_edge_batches:
// they depend on the GPU's SM count, so the sweep adds them once it has its device) or the named
// set "clusters" (the family's cluster-edge batches, Family::cluster_edge_batches: they depend on
// the GPU's cluster capacity, which the sweep probes).
struct BatchSet {
  std::vector<int> batches;    // the batches the text names itself, sorted, without repeats
  bool wave_edges = false;     // the text names "waves"
  bool cluster_edges = false;  // the text names "clusters"
  int max_batch = 0;           // the named sets' largest batch
};

// Throws InputError naming --batches and the form.
BatchSet parse_batch_set(const std::string& text, int max_batch);

// A family's default `--batches` text (Family::default_batches): as parse_batch_set, then no batch
// above max_batch, so that --max-batch caps the batches the default lists (e.g. a range
// 1-8) as it caps the named sets. Batches a user lists are kept as given.
BatchSet parse_default_batch_set(const std::string& text, int max_batch);

// The union of two batch lists, sorted, without repeats.
std::vector<int> merged_batches(std::vector<int> batches, const std::vector<int>& more);

// "1,8,64" (the --batches list form); "" for none.
std::string batch_list_text(const std::vector<int>& batches);

}  // namespace tuner
