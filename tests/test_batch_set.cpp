// tuner/batch_set: the --batches forms and vLLM's CUDA-graph capture list.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/error.hpp"
#include "tuner/batch_set.hpp"

using tuner::cudagraph_batches;
using tuner::InputError;
using tuner::parse_batch_set;

TEST_CASE("batch set: cudagraph is vLLM's 51 capture sizes up to 512") {
  const std::vector<int> all = cudagraph_batches(512);
  REQUIRE(all.size() == 51);
  CHECK(std::vector<int>(all.begin(), all.begin() + 5) == std::vector<int>{1, 2, 4, 8, 16});
  CHECK(all[33] == 248);  // the last multiple of 8
  CHECK(all[34] == 256);  // then multiples of 16
  CHECK(all[35] == 272);
  CHECK(all.back() == 512);
  CHECK(cudagraph_batches(128).size() == 3 + 16);
  CHECK(cudagraph_batches(100).back() == 96);
  CHECK(cudagraph_batches(1) == std::vector<int>{1});
}

TEST_CASE("batch set: lists, ranges, steps and the named set, sorted without repeats") {
  CHECK(parse_batch_set("8,1,4,1", 512).batches == std::vector<int>{1, 4, 8});
  CHECK(parse_batch_set("3-6", 512).batches == std::vector<int>{3, 4, 5, 6});
  CHECK(parse_batch_set("8-40:16,2", 512).batches == std::vector<int>{2, 8, 24, 40});
  CHECK(parse_batch_set("cudagraph", 16).batches == std::vector<int>{1, 2, 4, 8, 16});
  CHECK(parse_batch_set("cudagraph,3,600", 8).batches == std::vector<int>{1, 2, 3, 4, 8, 600});
}

TEST_CASE("batch set: 'waves' is resolved by the sweep, beside the batches the text names") {
  const tuner::BatchSet plain = parse_batch_set("cudagraph", 16);
  CHECK_FALSE(plain.wave_edges);
  const tuner::BatchSet with_waves = parse_batch_set("cudagraph,waves,3", 16);
  CHECK(with_waves.wave_edges);
  CHECK(with_waves.max_batch == 16);
  CHECK(with_waves.batches == std::vector<int>{1, 2, 3, 4, 8, 16});
  const tuner::BatchSet waves_alone = parse_batch_set("waves", 512);
  CHECK(waves_alone.wave_edges);
  CHECK(waves_alone.batches.empty());  // the sweep adds the edges, or refuses when none
  CHECK(tuner::merged_batches({8, 1, 132}, {132, 264, 4}) == std::vector<int>{1, 4, 8, 132, 264});
  CHECK_THROWS_WITH_AS(parse_batch_set("waves", 0), doctest::Contains("--max-batch"), InputError);
}

TEST_CASE("batch set: 'clusters' is resolved by the sweep too, alone or with 'waves'") {
  const tuner::BatchSet both = parse_batch_set("8,clusters,waves", 64);
  CHECK(both.cluster_edges);
  CHECK(both.wave_edges);
  CHECK(both.batches == std::vector<int>{8});
  const tuner::BatchSet alone = parse_batch_set("clusters", 512);
  CHECK(alone.cluster_edges);
  CHECK_FALSE(alone.wave_edges);
  CHECK(alone.batches.empty());  // the sweep adds the edges, or refuses when none
  CHECK_FALSE(parse_batch_set("cudagraph,waves", 512).cluster_edges);
  CHECK_THROWS_WITH_AS(parse_batch_set("clusters", 0), doctest::Contains("--max-batch"),
                       InputError);
  CHECK_THROWS_WITH_AS(parse_batch_set("cluster", 512), doctest::Contains("'clusters'"),
                       InputError);
}

TEST_CASE("batch set: the list text round-trips") {
  const std::vector<int> batches = cudagraph_batches(64);
  CHECK(tuner::batch_list_text({1, 8, 64}) == "1,8,64");
  CHECK(tuner::batch_list_text({}).empty());
  CHECK(parse_batch_set(tuner::batch_list_text(batches), 512).batches == batches);
}

TEST_CASE("batch set: bad items are refused, naming --batches and the forms") {
  for (const std::string text : {"0", "abc", "5-3", "", "1,,2", "4-", "1-8:0", "-3", "2000000"}) {
    CAPTURE(text);
    CHECK_THROWS_WITH_AS(parse_batch_set(text, 512), doctest::Contains("--batches"), InputError);
  }
  CHECK_THROWS_WITH_AS(parse_batch_set("5-3", 512), doctest::Contains("low-high"), InputError);
  CHECK_THROWS_WITH_AS(parse_batch_set("cudagraph", 0), doctest::Contains("--max-batch"),
                       InputError);
}

TEST_CASE("batch set: --max-batch caps a family default's listed batches, not a user's list") {
  const tuner::BatchSet capped = tuner::parse_default_batch_set("1-8,cudagraph,waves", 4);
  CHECK(capped.batches == std::vector<int>{1, 2, 3, 4});
  CHECK(capped.wave_edges);
  CHECK(tuner::parse_default_batch_set("1-8,cudagraph", 512).batches.size() ==
        51 + 4);  // 3, 5, 6, 7
  CHECK(parse_batch_set("1-8,cudagraph", 4).batches == std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8});
}
