#pragma once
// Which configs of one batch get the full timing protocol, and how many rounds each. In the batch
// search every candidate is first *screened* (the same L2-safe graph, a few replays: a ranking),
// then only the finalists are timed with the full protocol (timing protocol 2: warm-up, replays
// until the median is known to 1 %, per-launch quantiles) in interleaved rounds; the winner rule
// reads only those full-protocol timings. Pure functions (tests/test_finalists.cpp).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/measure.hpp"

namespace tuner {

struct FinalistPolicy {
  int most = 3;          // --finalists: configs re-timed against the default at most
  int rounds = 3;        // interleaved full-protocol rounds
  double margin = 0.02;  // between anchors: only configs screened within this of the best ...
  // ... and the default joins every round only when its screen is within this of the best; a
  // default far behind is timed in full once (its comparison is not close).
  double default_close = 0.10;
  // Between anchors also the fastest screen of each parameter value (name=value) that no finalist
  // has, within value_margin of the best, at most value_most of them: a screen's bias differs
  // between structures (on the H200 at batch 256 the cluster merge screened 2.6 % behind the
  // per-row splits without a combine and timed 6.9 % behind in full).
  double value_margin = 0.05;
  int value_most = 2;
};

struct Finalists {
  std::vector<std::string> configs;   // the default first, then the others fastest first
  std::map<std::string, int> rounds;  // full-protocol rounds per config
  std::string rule;                   // in words, with the numbers (for the re-timing trials)
  // Configs named by --also-time that are the same launch as a finalist (tuner/same_launch.hpp)
  // -> that finalist: timed once, so one launch never gets two full-protocol times (on the H200
  // two timings of one schedule-1 launch at batch 300 came 4.5 % apart in one run).
  std::map<std::string, std::string> twins;
};

// `screened`: first-pass medians (us) of this batch by params JSON, the default among them.
// `screening`: whether they are screens (the search) or full-protocol timings (--exhaustive,
// shards, several GPUs: then the `most` fastest and the default, every round, as before).
// `at_anchor`: an anchor batch keeps the `most` fastest even when screened far apart.
Finalists choose_finalists(const std::map<std::string, double>& screened,
                           const std::string& default_params, bool screening, bool at_anchor,
                           const FinalistPolicy& policy);

// Configs named before the sweep (--also-time: e.g. the config a regret check compares with the
// oracle's best) join `finalists` at this batch for every round, so that both sides of that
// comparison are full-protocol timings of one run. Only configs with a first-pass timing in
// `screened` join (one that failed or was not measured here is never timed); the others are
// returned. A named config already chosen is timed in every round. A named config in `copies`
// (left unmeasured here as the same launch as a measured config) is not timed itself: the config
// it copies is timed in every round, and the named one becomes its twin.
std::vector<std::string> add_named_finalists(const std::vector<std::string>& named,
                                             const std::map<std::string, double>& screened,
                                             const std::map<std::string, std::string>& copies,
                                             int rounds, Finalists& finalists);

// `timings` (full-protocol re-timings by params JSON) with every twin given its finalist's timing.
std::map<std::string, Timing> with_twins(std::map<std::string, Timing> timings,
                                         const Finalists& finalists);

// The fastest config with a timing in `timings` (full-protocol re-timings; with `fallback`, the
// first-pass timing of a finalist whose re-timing failed), and that timing. Empty when the default
// has no timing: there is nothing to compare against.
struct Fastest {
  std::string params;
  Timing timing;
  Timing default_timing;
};
std::optional<Fastest> fastest_finalist(const Finalists& finalists,
                                        const std::map<std::string, Timing>& timings,
                                        const std::map<std::string, Timing>& fallback);

}  // namespace tuner
