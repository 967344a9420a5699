#pragma once
// Version numbers and identifiers shared by the store (db/store) and the frozen file (tunedb).
#include <cstdint>

namespace tunedb {

// PRAGMA user_version of a tuning store (runs, sources, problems, trials, winners).
inline constexpr int kStoreSchemaVersion = 1;
// PRAGMA user_version of a frozen file (metadata, defaults, winners, cubins).
inline constexpr int kFrozenSchemaVersion = 1;
// PRAGMA application_id of both ("TUNR"): tells our files from other SQLite files.
inline constexpr std::int32_t kApplicationId = 0x54554E52;

}  // namespace tunedb
