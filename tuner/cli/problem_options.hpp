#pragma once
// Options every command that names a problem shares (--family --heads --tp --topk --kv
// --page-size), parsed into a validated Shape. Values are read as text so that an empty or
// non-numeric value gets a message naming the option.
#include <boost/program_options.hpp>
#include <string>

#include "kernels/sparse_mla_decode/shape.hpp"

namespace tuner::cli {

struct ProblemOptions {
  std::string family = "sparse_mla_decode";
  std::string heads = "64";
  std::string tp = "4";
  std::string topk = "2048";
  std::string kv = "fp8_ds_mla";
  std::string page_size = "64";
};

void add_problem_options(boost::program_options::options_description& options,
                         ProblemOptions& values);

// Throws InputError naming the option: unknown family, non-numeric values, invalid shape.
smla_family::Shape parse_problem(const ProblemOptions& values);

// A positive integer option value; throws InputError naming `option`.
int parse_positive_int(const std::string& text, const std::string& option);

// "1,2,4" -> {1, 2, 4}; throws InputError naming `option`.
std::vector<int> parse_int_list(const std::string& text, const std::string& option);

// Parses argv-style args; prints help and returns false when --help was given.
bool parse_or_help(const std::string& command, const std::string& synopsis,
                   const boost::program_options::options_description& options,
                   const std::vector<std::string>& args);

}  // namespace tuner::cli
