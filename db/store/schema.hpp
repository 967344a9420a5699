#pragma once
// The store's schema script (CREATE ... IF NOT EXISTS only: running it again changes nothing).

namespace tuner::db {

class Connection;

extern const char* const kStoreSchemaSql;

// Before kStoreSchemaSql, inside its transaction: brings a store of `from_version` to the current
// schema. Version 3 gains the trials' `members` (ALTER TABLE ADD COLUMN); version 2 their
// launch_p10_us / launch_p90_us and the fate skipped_by_search (the table is rebuilt).
// Version 1 is moved out of the way (trials gained measure_env and the 'transient' fate: SQLite
// cannot change a CHECK, so the table is rebuilt) and finish_migration copies the old rows over.
void begin_migration(const Connection& connection, int from_version);
void finish_migration(const Connection& connection, int from_version);

// For a read-only connection to a store of `version` (1 to 3): temporary views that present its
// tables as the current schema does (trials.measure_env = '', launch quantiles and members NULL),
// so reports read old stores unchanged.
void read_older_schema(const Connection& connection, int version);

}  // namespace tuner::db
