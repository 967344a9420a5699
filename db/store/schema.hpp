#pragma once
// The store's schema script (CREATE ... IF NOT EXISTS only: running it again changes nothing).

namespace tuner::db {

extern const char* const kStoreSchemaSql;

}  // namespace tuner::db
