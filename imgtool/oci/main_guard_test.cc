#include "oci/main_guard.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace imgtool {
namespace {

// main's guard: what escapes a verb is an internal error with exit 70, never an abort.
TEST(RunGuarded, PassesTheBodysExitCodeThrough) {
  EXPECT_EQ(RunGuarded("imgtool", [] { return 3; }), 3);
}

TEST(RunGuarded, AStandardExceptionIsAnInternalError) {
  testing::internal::CaptureStderr();
  int rc = RunGuarded("imgtool", []() -> int { throw std::runtime_error("the reason"); });
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(rc, 70);
  EXPECT_EQ(err, "imgtool: internal error: the reason\n");
}

TEST(RunGuarded, AnyOtherThrowIsAnInternalErrorToo) {
  testing::internal::CaptureStderr();
  int rc = RunGuarded("imgtool-fleet", []() -> int { throw 42; });
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(rc, 70);
  EXPECT_EQ(err, "imgtool-fleet: internal error: an unknown exception\n");
}

}  // namespace
}  // namespace imgtool
