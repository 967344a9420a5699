#include "tuner/cli/commands.hpp"

namespace tuner::cli {

const std::vector<Command>& commands() {
  static const std::vector<Command> list = {
      {"check", "compile every config (no GPU) or run the correctness check (GPU)", run_check},
  };
  return list;
}

}  // namespace tuner::cli
