#pragma once
// Version numbers and identifiers shared by the store (db/store) and the frozen file (tunedb).
#include <cstdint>

namespace tunedb {

// PRAGMA user_version of a tuning store (runs, sources, problems, trials, winners). Version 2
// keys problems and winners on (family, canonical shape text, batch); version 1 files (one
// family's fixed shape columns) are refused with the fix (db/README.md).
// Version 3 adds the fate skipped_by_search (the batch search) and the trials' per-launch
// quantiles (launch_p10_us, launch_p90_us; timing protocol 2); a version 2 store is upgraded in
// place by the first writing open (db/store/migrate.cpp). Version 4 adds the trials' `members`
// (a plan row that stands for every config with one parameter value the shape rules out), added
// to a version 3 store in place.
inline constexpr int kStoreSchemaVersion = 4;
// PRAGMA user_version of a frozen file (metadata, defaults, winners, cubins, launches). Version 3
// added `launches` (what the serving launcher needs per kernel: lowered name, block size, dynamic
// shared memory, the max-dynamic-smem attribute, launch-parameter values); a version-2 frozen file
// is refused with the fix (freeze it again), since its cubins cannot be launched. Version 4 added
// each cubin's `launch_contract` (core/launch_contract.hpp: the parameter layout its kernels read);
// a version-3 file is refused the same way, since nothing says which layout its cubins expect.
inline constexpr int kFrozenSchemaVersion = 4;
inline constexpr int kFirstLaunchContractFrozenVersion = 4;
// The first versions keyed on shape text; older files are refused, never misread.
inline constexpr int kFirstShapeTextVersion = 2;
// PRAGMA application_id of a tuning store ("TUNR"): tells our files from other SQLite files.
inline constexpr std::int32_t kApplicationId = 0x54554E52;
// PRAGMA application_id of a frozen file ("TUNF"). Frozen-ness lives in the file header, not in a
// row that an edit could delete; a file with a frozen file's tables but without this id is
// refused (db/README.md, "Frozen files").
inline constexpr std::int32_t kFrozenApplicationId = 0x54554E46;

}  // namespace tunedb
