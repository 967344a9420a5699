#include "tuner/cli/problem_options.hpp"

#include <charconv>
#include <iostream>

#include <algorithm>

#include "core/error.hpp"
#include "kernels/registry.hpp"
#include "tuner/shape_text.hpp"

namespace po = boost::program_options;

namespace tuner::cli {

std::string option_name(const std::string& dim) {
  std::string name = dim;
  for (char& c : name) c = c == '_' ? '-' : c;
  return name;
}

ProblemOptions problem_options_for(const Args& args) {
  ProblemOptions problem;
  problem.family_name = families().front()->name;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--family" && i + 1 < args.size()) problem.family_name = args[i + 1];
    if (args[i].rfind("--family=", 0) == 0) problem.family_name = args[i].substr(9);
  }
  problem.family = &family_by_name(problem.family_name);
  for (const ShapeDim& dim : problem.family->dims) problem.values[dim.name] = dim.default_value;
  return problem;
}

void add_problem_options(po::options_description& options, ProblemOptions& values) {
  options.add_options()("family", po::value(&values.family_name)->default_value(values.family_name),
                        ("kernel family: " + family_names()).c_str());
  options.add_options()("shape", po::value(&values.shape_text),
                        "the canonical shape text as the DB keys it (tuner query prints it), "
                        "instead of the dimension options, e.g. block=128,k=4096,n=7168");
  for (const ShapeDim& dim : values.family->dims) {
    std::string help = dim.help;
    if (!dim.allowed.empty()) {
      help += ":";
      for (const std::string& allowed : dim.allowed) help += " " + allowed;
    }
    options.add_options()(option_name(dim.name).c_str(),
                          po::value(&values.values[dim.name])->default_value(dim.default_value),
                          help.c_str());
  }
}

int parse_positive_int(const std::string& text, const std::string& option) {
  int value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || ptr != end) {
    throw InputError("--" + option + " needs a positive integer, got '" + text + "'");
  }
  if (value <= 0) throw InputError("--" + option + " must be positive, got " + text);
  return value;
}

std::vector<int> parse_int_list(const std::string& text, const std::string& option) {
  std::vector<int> values;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string item =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    values.push_back(parse_positive_int(item, option));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return values;
}

namespace {

// --shape: canonical text that the family's own canonicalization reproduces.
Problem parse_shape_text(const Family& family, const std::string& text) {
  const Shape given = parse_canonical_shape(text);
  const Shape canonical =
      family.canonicalize(std::map<std::string, std::string>(given.dims.begin(), given.dims.end()));
  if (!(canonical == given)) {
    throw InputError("--shape '" + text + "' is not " + family.name + "'s canonical form: use '" +
                     canonical.canonical() + "'");
  }
  return Problem{&family, canonical};
}

}  // namespace

Problem parse_problem(const ProblemOptions& values) {
  const Family& family = family_by_name(values.family_name);
  if (!values.shape_text.empty()) return parse_shape_text(family, values.shape_text);
  for (const ShapeDim& dim : family.dims) {
    const std::string& value = values.values.at(dim.name);
    if (dim.allowed.empty()) continue;
    if (std::find(dim.allowed.begin(), dim.allowed.end(), value) == dim.allowed.end()) {
      std::string allowed;
      for (const std::string& a : dim.allowed) {
        allowed += allowed.empty() ? "" : " | ";
        allowed += a;
      }
      std::string message = "--" + option_name(dim.name) + " '" + value + "' is not allowed for ";
      message += family.name;
      message += ": use one of ";
      message += allowed;
      throw InputError(message);
    }
  }
  return Problem{&family, family.canonicalize(values.values)};
}

bool parse_or_help(const std::string& command, const std::string& synopsis,
                   const po::options_description& options, const std::vector<std::string>& args) {
  po::options_description all(options);
  all.add_options()("help,h", "show this help");
  po::variables_map variables;
  po::store(po::command_line_parser(args).options(all).run(), variables);
  if (variables.count("help") > 0) {
    std::cout << "usage: tuner " << command << " " << synopsis << "\n\n" << all << "\n";
    return false;
  }
  po::notify(variables);
  return true;
}

}  // namespace tuner::cli
