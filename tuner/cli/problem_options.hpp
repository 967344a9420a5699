#pragma once
// Options every command that names a problem shares: --family, then one option per shape dimension
// of that family (Family::dims: one --<dim> option per shape dimension),
// parsed into the family's canonical Shape. Values are read as text; the family validates them and
// names the option in its message.
#include <boost/program_options.hpp>
#include <map>
#include <string>

#include "core/family.hpp"
#include "core/shape.hpp"
#include "tuner/cli/commands.hpp"

namespace tuner::cli {

struct ProblemOptions {
  const Family* family = nullptr;
  std::string family_name;
  std::map<std::string, std::string> values;  // dimension name -> text (defaults filled in)
  std::string shape_text;  // --shape: the canonical text, instead of the dimension options
};

// Finds --family in `args` (default: the first registered family) and fills the defaults of its
// dimensions. Throws InputError for an unknown family, naming the known ones.
ProblemOptions problem_options_for(const Args& args);

// --family and one option per dimension of the chosen family.
void add_problem_options(boost::program_options::options_description& options,
                         ProblemOptions& values);

struct Problem {
  const Family* family = nullptr;
  Shape shape;  // canonical
};

// Throws InputError naming the option and the allowed values, or, for --shape, when the text is
// not the family's canonical form.
Problem parse_problem(const ProblemOptions& values);

// "--page-size" for the dimension "page_size".
std::string option_name(const std::string& dim);

// A positive integer option value; throws InputError naming `option`.
int parse_positive_int(const std::string& text, const std::string& option);

// "1,2,4" -> {1, 2, 4}; throws InputError naming `option`.
std::vector<int> parse_int_list(const std::string& text, const std::string& option);

// Parses argv-style args; prints help and returns false when --help was given.
bool parse_or_help(const std::string& command, const std::string& synopsis,
                   const boost::program_options::options_description& options,
                   const std::vector<std::string>& args);

}  // namespace tuner::cli
