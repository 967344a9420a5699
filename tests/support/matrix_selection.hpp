#pragma once
// Which parts of gpu_sparse_mla_decode's correctness matrix a run takes, from the environment: a
// time-limited GPU machine runs the matrix over several calls.
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/sparse_mla_decode/shape.hpp"

namespace tuner::test {

// TUNER_GPU_MATRIX=bf16:2,bf16:1 runs only those (format:TP) parts of the matrix (to split it
// over calls of a time-limited GPU machine); unset runs all of it.
inline bool matrix_part_selected(smla_family::KvFormat kv, int tp) {
  const char* parts = std::getenv("TUNER_GPU_MATRIX");
  if (parts == nullptr || *parts == '\0') return true;
  const std::string part = std::string(to_string(kv)) + ":" + std::to_string(tp);
  const std::string list = std::string(",") + parts + ",";
  return list.find("," + part + ",") != std::string::npos;
}

// The comma-separated numbers of the environment variable `name`, or `all` where it is unset.
inline std::vector<int> listed_or(const char* name, std::vector<int> all) {
  const char* listed = std::getenv(name);
  if (listed == nullptr || *listed == '\0') return all;
  std::vector<int> values;
  std::stringstream items(listed);
  for (std::string item; std::getline(items, item, ',');) values.push_back(std::stoi(item));
  return values;
}

// TUNER_GPU_MATRIX_BATCHES=64,128 runs only those of the matrix's batches (the rest of a part a
// time limit cut short; a batch listed twice runs twice: a moving error is a race); unset runs
// {1, 7, 64, 128}. TUNER_GPU_MATRIX_TOPKS likewise for {2048, 600, 5}.
inline std::vector<int> matrix_batches() {
  return listed_or("TUNER_GPU_MATRIX_BATCHES", {1, 7, 64, 128});
}
inline std::vector<int> matrix_topks() {
  return listed_or("TUNER_GPU_MATRIX_TOPKS", {2048, 600, 5});
}

// TUNER_GPU_LOG=FILE: the file a GPU test writes one line per check (or per finding) to, opened
// once per process; null when unset.
inline std::FILE* gpu_log() {
  static std::FILE* file = [] {
    const char* path = std::getenv("TUNER_GPU_LOG");
    return path != nullptr ? std::fopen(path, "w") : nullptr;
  }();
  return file;
}

}  // namespace tuner::test
