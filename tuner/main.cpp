// tuner: a thin main over the engine library. One top-level catch prints `tuner: error: ...`.
// Exit codes: 0 success, 1 failure, 2 bad input (names the input and the fix), 3 no GPU.
#include <boost/program_options/errors.hpp>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "db/sqlite/error.hpp"
#include "tuner/cli/commands.hpp"

namespace {

void print_usage() {
  std::printf(
      "usage: tuner <command> [options]   (tuner <command> --help for its options)\n\ncommands:\n");
  for (const tuner::cli::Command& command : tuner::cli::commands()) {
    std::printf("  %-8s %s\n", command.name, command.summary);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
    print_usage();
    return argc < 2 ? 2 : 0;
  }
  const std::string name = argv[1];
  const std::vector<std::string> args(argv + 2, argv + argc);
  try {
    for (const tuner::cli::Command& command : tuner::cli::commands()) {
      if (name == command.name) return command.run(args);
    }
    std::fprintf(stderr, "tuner: error: unknown command '%s'\n", name.c_str());
    print_usage();
    return 2;
  } catch (const tuner::InputError& error) {
    std::fprintf(stderr, "tuner: error: %s\n", error.what());
    return 2;
  } catch (const tuner::NoGpuError& error) {
    // Its own code, so that scripts can fall back to GPU-free work (scripts/main_job.sh).
    std::fprintf(stderr, "tuner: error: %s\n", error.what());
    return 3;
  } catch (const tuner::db::DbInputError& error) {
    std::fprintf(stderr, "tuner: error: %s\n", error.what());
    return 2;
  } catch (const boost::program_options::error& error) {
    std::fprintf(stderr, "tuner: error: %s (see tuner %s --help)\n", error.what(), name.c_str());
    return 2;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "tuner: error: %s\n", error.what());
    return 1;
  }
}
