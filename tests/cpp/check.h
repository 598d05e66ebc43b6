// A minimal test harness for the kernel library's C++ tests (no dependencies): each TEST
// registers a function, CHECK records a failure with its line and carries on, and main()
// runs them all and returns non-zero when any check failed.
#pragma once

#include <cstdio>
#include <exception>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace vecadd_test {

struct Registry {
  std::vector<std::pair<std::string, std::function<void()>>> tests;
  int failures = 0;

  static Registry& get() {
    static Registry registry;
    return registry;
  }
};

struct Register {
  Register(const char* name, std::function<void()> test) {
    Registry::get().tests.emplace_back(name, std::move(test));
  }
};

inline void fail(const char* file, int line, const std::string& what) {
  std::printf("  %s:%d: %s\n", file, line, what.c_str());
  ++Registry::get().failures;
}

// Runs every registered test; prints a line per test and a summary ctest and people can read.
inline int run_all() {
  Registry& registry = Registry::get();
  int failed_tests = 0;
  for (const auto& [name, test] : registry.tests) {
    const int before = registry.failures;
    try {
      test();
    } catch (const std::exception& error) {
      fail(__FILE__, __LINE__, std::string("unexpected exception: ") + error.what());
    }
    const bool passed = registry.failures == before;
    failed_tests += passed ? 0 : 1;
    std::printf("%s %s\n", passed ? "ok    " : "FAILED", name.c_str());
  }
  std::printf("%zu passed, %d failed\n", registry.tests.size() - failed_tests, failed_tests);
  return failed_tests == 0 ? 0 : 1;
}

}  // namespace vecadd_test

#define VECADD_TEST_CONCAT2(a, b) a##b
#define VECADD_TEST_CONCAT(a, b) VECADD_TEST_CONCAT2(a, b)
#define TEST(name)                                                                      \
  static void name();                                                                   \
  static const vecadd_test::Register VECADD_TEST_CONCAT(register_, name)(#name, &name); \
  static void name()

#define CHECK(condition)                                              \
  do {                                                                \
    if (!(condition)) {                                               \
      vecadd_test::fail(__FILE__, __LINE__, "CHECK(" #condition ")"); \
    }                                                                 \
  } while (false)

#define CHECK_EQ(a, b)                                                                     \
  do {                                                                                     \
    const auto vecadd_a = (a);                                                             \
    const auto vecadd_b = (b);                                                             \
    if (!(vecadd_a == vecadd_b)) {                                                         \
      vecadd_test::fail(__FILE__, __LINE__,                                                \
                        "CHECK_EQ(" #a ", " #b "): " + std::to_string(vecadd_a) + " vs " + \
                            std::to_string(vecadd_b));                                     \
    }                                                                                      \
  } while (false)

#define TEST_MAIN()                \
  int main() {                     \
    return vecadd_test::run_all(); \
  }
