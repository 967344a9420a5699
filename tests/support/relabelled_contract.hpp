#pragma once
// A copy of a frozen file as another build would have frozen it: every cubin's launch contract
// replaced and the checksum recomputed, so the file is intact and only the contract differs (what
// the launcher and `tuner verify` must tell apart from damage).
#include <filesystem>
#include <string>

#include "db/sqlite/sqlite.hpp"
#include "db/tunedb/frozen.hpp"

namespace tuner::test {

// `which`: an SQL condition on the cubins row (all of them by default).
inline void copy_with_contract(const std::filesystem::path& frozen,
                               const std::filesystem::path& copy, const std::string& contract,
                               const std::string& which = "1") {
  std::filesystem::copy_file(frozen, copy);
  const db::Connection edit = db::Connection::open(copy, db::OpenMode::read_write_create);
  edit.prepare("UPDATE cubins SET launch_contract = ?1 WHERE " + which).bind(1, contract).run();
  edit.prepare("UPDATE metadata SET value = ?1 WHERE key = 'checksum'")
      .bind(1, tunedb::detail::frozen_checksum(edit))
      .run();
}

}  // namespace tuner::test
