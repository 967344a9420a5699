#include "kernels/sparse_mla_decode/geometry.hpp"

#include <algorithm>
#include <string>

#include "kernels/sparse_mla_decode/deploy.hpp"
#include "kernels/sparse_mla_decode/resources.hpp"
#include "templates/sparse_mla_decode/layout.h"
#include "templates/sparse_mla_decode/schedule.h"

namespace tuner::smla_family {

LaunchGeometry launch_geometry(const KernelConfig& config, const Shape& shape,
                               const ClusterCapacity& clusters) {
  LaunchGeometry geometry;
  // The split count is deploy.hpp's (the serving launcher runs the same function).
  const DecodeDims dims{shape.batch, shape.n_local_heads(), shape.topk};
  const SplitPlan& plan = geometry.plan = split_plan(
      dims, {config.block_t, config.block_h, config.target_ctas, config.merge, config.schedule},
      clusters);
  const std::array<unsigned, 3> split = split_grid(dims, plan);
  std::copy(split.begin(), split.end(), geometry.split_grid);
  const StaticBudget budget = static_budget(config, shape.kv_format);
  geometry.split_threads = static_cast<unsigned>(budget.threads_per_block);
  geometry.split_smem_bytes = static_cast<unsigned>(budget.smem_bytes_per_block);
  const std::array<unsigned, 3> combine = combine_grid(dims, plan);
  std::copy(combine.begin(), combine.end(), geometry.combine_grid);
  geometry.combine_threads = kCombineThreads;
  return geometry;
}

std::string launch_facts_text(const KernelConfig& config, const Shape& shape) {
  const LaunchGeometry geometry = launch_geometry(config, shape, kCapacityUnknown);
  const auto grid = [](const unsigned(&dims)[3]) {
    return std::to_string(dims[0]) + "x" + std::to_string(dims[1]) + "x" + std::to_string(dims[2]);
  };
  // The combine's launch order, and under merge 4 the partials it reads.
  const std::string combine_facts =
      std::string(combine_order(config.merge) == LaunchOrder::programmatic ? " order=programmatic"
                                                                           : " order=stream") +
      (geometry.plan.bf16_partials ? " partials=bf16" : "");
  if (smla::divides_tiles(config.schedule)) {
    // One wave of the kernel's resident CTAs on the launching device, whatever TARGET_CTAS says:
    // the grid, the parts per row and the combine's grid follow from it, the batch and the shape.
    // (The compile key before this text names the schedule's kernel.)
    return std::string("split grid=") +
           (config.schedule == smla::kScheduleWholeRows ? "whole rows + balanced remainder"
                                                        : "balanced") +
           " over one wave of resident CTAs block=" + std::to_string(geometry.split_threads) +
           " smem=" + std::to_string(geometry.split_smem_bytes) + " combine" + combine_facts;
  }
  if (config.target_ctas == kTargetOneWave) {
    // The split count follows the launching device's resident CTAs, which this text cannot know
    // (without them the plan above is one split): a launch of its own at every batch, named by
    // its merge (what sets the cluster, the tickets, the combine's order and partials).
    return "split grid=per-row splits over one wave of resident CTAs block=" +
           std::to_string(geometry.split_threads) +
           " smem=" + std::to_string(geometry.split_smem_bytes) +
           " merge=" + std::to_string(config.merge) + combine_facts;
  }
  std::string text = "split grid=" + grid(geometry.split_grid) +
                     " block=" + std::to_string(geometry.split_threads) +
                     " smem=" + std::to_string(geometry.split_smem_bytes) +
                     " cluster_x=" + std::to_string(geometry.plan.cluster_x()) +
                     " tokens/split=" + std::to_string(geometry.plan.tokens_per_split) +
                     " cluster_merge=" + (geometry.plan.merges_in_cluster() ? "1" : "0");
  if (geometry.plan.takes_tickets()) {
    const std::array<unsigned, 3> reset =
        reset_grid({shape.batch, shape.n_local_heads(), shape.topk}, geometry.plan);
    return text + (geometry.plan.merges_last_cta() ? " merge=last_cta" : " merge=row_slices") +
           " ticket_reset grid=" + std::to_string(reset[0]) + " split order=programmatic";
  }
  if (!geometry.runs_combine()) return text + " combine=none";
  return text + " combine grid=" + grid(geometry.combine_grid) +
         " block=" + std::to_string(geometry.combine_threads) + combine_facts;
}

}  // namespace tuner::smla_family
