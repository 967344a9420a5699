#include "tuner/cli/problem_options.hpp"

#include <charconv>
#include <iostream>

#include "kernels/sparse_mla_decode/space.hpp"
#include "tuner/error.hpp"

namespace po = boost::program_options;

namespace tuner::cli {

void add_problem_options(po::options_description& options, ProblemOptions& values) {
  options.add_options()("family", po::value(&values.family)->default_value(values.family),
                        "kernel family")("heads",
                                         po::value(&values.heads)->default_value(values.heads),
                                         "attention heads of the model")(
      "tp", po::value(&values.tp)->default_value(values.tp), "attention tensor-parallel size")(
      "topk", po::value(&values.topk)->default_value(values.topk), "selected tokens per query")(
      "kv", po::value(&values.kv)->default_value(values.kv), "KV cache format: fp8_ds_mla | bf16")(
      "page-size", po::value(&values.page_size)->default_value(values.page_size),
      "KV page size (tokens)");
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

smla_family::Shape parse_problem(const ProblemOptions& values) {
  if (values.family != smla_family::kFamilyName) {
    throw InputError("unknown family '" + values.family + "': known families are " +
                     std::string(smla_family::kFamilyName) + " (use --family " +
                     smla_family::kFamilyName + ")");
  }
  smla_family::Shape shape;
  shape.n_heads = parse_positive_int(values.heads, "heads");
  shape.attn_tp = parse_positive_int(values.tp, "tp");
  shape.topk = parse_positive_int(values.topk, "topk");
  shape.page_size = parse_positive_int(values.page_size, "page-size");
  shape.kv_format = smla_family::parse_kv_format(values.kv);
  smla_family::validate(shape);
  return shape;
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
