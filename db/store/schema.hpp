#pragma once
// The store's schema script (CREATE ... IF NOT EXISTS only: running it again changes nothing).

namespace tuner::db {

class Connection;

extern const char* const kStoreSchemaSql;

// Before kStoreSchemaSql, inside its transaction: moves a store of `from_version` (1) out of the
// way of the current schema (trials gained measure_env and the 'transient' fate: SQLite cannot
// change a CHECK, so the table is rebuilt). finish_migration copies the old rows over.
void begin_migration(const Connection& connection, int from_version);
void finish_migration(const Connection& connection, int from_version);

// For a read-only connection to a store of `version` (1): temporary views that present its tables
// as the current schema does (trials.measure_env = ''), so reports read old stores unchanged.
void read_older_schema(const Connection& connection, int version);

}  // namespace tuner::db
