#pragma once
// --also-time: configs a sweep times in full at named batches beside its own finalists, in the
// same interleaved rounds. A regret check needs both sides of its comparison (the tuned DB's
// config and the oracle's best) timed under the full protocol in one run: screens are ~3 % noisy
// at large batches, the size of the regrets to be told apart (BENCHMARKS.md section 9).
// scripts/regret.py also-time writes the file. Pure parsing (tests/test_also_time.cpp).
#include <map>
#include <string>
#include <vector>

#include "core/config.hpp"

namespace tuner {

// Batch -> canonical params JSON of the configs to time in full there.
using AlsoTime = std::map<int, std::vector<std::string>>;

// `text`: a JSON object {"BATCH": [CONFIG, ...], ...}, each CONFIG an object giving every
// parameter of `space` one of its values. Every batch must be one of `batches` (the sweep's).
// Throws InputError naming `source` (the file), the entry and the fix.
AlsoTime parse_also_time(const std::string& text, const std::string& source,
                         const std::vector<int>& batches, const std::vector<Parameter>& space);

}  // namespace tuner
