// The CPU tests' main. CTest runs each doctest case on its own, by name (doctest_discover_tests in
// tests/CMakeLists.txt). A name filter that matches no case would pass having run nothing: a ';'
// in a case name made CMake split it into names that matched nothing, and 12 cases passed
// that way without running. So a run whose --test-case filter selects no case fails.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <string_view>

namespace {

int cases_started = 0;

struct CaseCounter : doctest::IReporter {
  explicit CaseCounter(const doctest::ContextOptions& /*options*/) {}
  void report_query(const doctest::QueryData& /*data*/) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats& /*stats*/) override {}
  void test_case_start(const doctest::TestCaseData& /*data*/) override { ++cases_started; }
  void test_case_reenter(const doctest::TestCaseData& /*data*/) override {}
  void test_case_end(const doctest::CurrentTestCaseStats& /*stats*/) override {}
  void test_case_exception(const doctest::TestCaseException& /*exception*/) override {}
  void subcase_start(const doctest::SubcaseSignature& /*signature*/) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData& /*data*/) override {}
  void log_message(const doctest::MessageData& /*data*/) override {}
  void test_case_skipped(const doctest::TestCaseData& /*data*/) override {}
};

REGISTER_LISTENER("case_counter", 1, CaseCounter);

bool filters_by_name(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg(argv[i]);
    if (arg.rfind("--test-case=", 0) == 0 || arg.rfind("-tc=", 0) == 0) return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  const int result = context.run();
  if (context.shouldExit()) return result;  // --help, --list-test-cases, ...
  if (filters_by_name(argc, argv) && cases_started == 0) {
    std::fprintf(stderr,
                 "doctest_main: the --test-case filter selects no test case: the case was "
                 "renamed or removed, or CMake split its name (no ';' in case names)\n");
    return 1;
  }
  return result;
}
