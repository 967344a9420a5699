#pragma once
// The winners of a merged store, decided again from its measured trials with the sweep's
// noise-aware rule (db/store/winner_rule.hpp): per (family, budget arch, device, shape, batch)
// the fastest measured config against the family's default. A config with a wrong result or a
// fault in the group never wins. A winner a sweep decided on its interleaved re-timing (stage
// retime) is better evidence than single timings from different shards and is kept as it is;
// winners an earlier merge decided (reason "merge: ...") are decided again.
#include <string>
#include <vector>

#include "db/store/store.hpp"

namespace tuner {

struct WinnerCounts {
  int decided = 0;
  int kept = 0;
  std::vector<std::string> notes;
};

inline constexpr const char* kMergeReasonPrefix = "merge: ";

WinnerCounts decide_merged_winners(db::Store& store);

}  // namespace tuner
