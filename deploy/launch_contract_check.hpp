#pragma once
// The launcher's check of a frozen cubin's launch contract (core/launch_contract.hpp) against its
// own build's: a kernel that reads its parameter block under another layout launches without an
// error and writes wrong output, so such a cubin is refused at open, never launched.
#include <optional>
#include <string>
#include <string_view>

namespace tunedb::cuda {

// Empty when `frozen` (the cubin's recorded contract) is `own` (this library's for the cubin's
// family); otherwise the refusal, naming both contracts and the fix. `what` names the cubin.
inline std::optional<std::string> launch_contract_problem(std::string_view what,
                                                          std::string_view frozen,
                                                          std::string_view own) {
  if (frozen == own) return std::nullopt;
  const std::string recorded =
      frozen.empty() ? " with no launch contract" : " under launch contract " + std::string(frozen);
  return std::string(what) + " was frozen" + recorded +
         ", but this libtunedb_cuda launches contract " + std::string(own) +
         " (the parameter blocks its kernels read differ from the ones this library packs): "
         "freeze the store again with the tuner of this library's build (`tuner freeze --db "
         "STORE --out NEW.db`; a changed kernel source needs a new `tuner sweep` first), or serve "
         "it with the libtunedb_cuda of the build that froze it";
}

}  // namespace tunedb::cuda
