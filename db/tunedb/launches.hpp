#pragma once
// The frozen file's `launches` table: what the serving launcher needs per kernel of a cubin.
// Internal to tunedb (freeze writes it, TuningDb::open reads it into Cubin::launches).
#include <functional>
#include <string>
#include <string_view>

#include "db/sqlite/sqlite.hpp"
#include "db/tunedb/freeze.hpp"
#include "db/tunedb/tunedb.hpp"

namespace tunedb::detail {

// Checks the provider's launch records against its image (each kernel name in the image, block
// size positive, max-dynamic-smem >= dynamic smem, launch params a flat JSON object of integers,
// roles distinct) and inserts them. Throws DbError naming the cubin and the fix.
void insert_launches(const tuner::db::Connection& out, const CubinRequest& key,
                     const CubinImage& image, const std::string& store);

// Fills cubin.launches from the rows of (cubin.family, cubin.arch, cubin.params_json,
// `source_hash`), in role order; `intern` keeps the strings alive as long as the TuningDb. Throws
// DbError naming the row when its launch params are not a flat JSON object of integers.
void read_launches(const tuner::db::Connection& connection, std::string_view source_hash,
                   Cubin& cubin, const std::function<std::string_view(std::string_view)>& intern,
                   const std::string& path);

}  // namespace tunedb::detail
