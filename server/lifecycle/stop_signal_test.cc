// StopSignal: requests arrive as Wait()/WaitForStop() results, on the
// platform's own mechanism (POSIX signals raised at this process; Windows
// console control events generated for this process's console group).
#include "server/lifecycle/stop_signal.h"

#ifdef _WIN32
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>
#else
#include <csignal>
#endif

#include <memory>
#include <string>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace dmls::server {
namespace {

#ifndef _WIN32
// One test: Install() is once per process.
TEST(StopSignalTest, SignalsBecomeRequests) {
  absl::StatusOr<std::unique_ptr<StopSignal>> s = StopSignal::Install();
  ASSERT_TRUE(s.ok()) << s.status();
  std::string name;

  // Blocked, so raise() leaves each pending for Wait() instead of acting.
  ASSERT_EQ(raise(SIGHUP), 0);
  EXPECT_EQ((*s)->Wait(&name), StopSignal::Request::kReload);
  EXPECT_EQ(name, "SIGHUP");
  ASSERT_EQ(raise(SIGTERM), 0);
  EXPECT_EQ((*s)->Wait(&name), StopSignal::Request::kStop);
  EXPECT_EQ(name, "SIGTERM");

  // The drain's wait: nothing pending -> false after the timeout; a second
  // SIGINT -> true at once; a SIGHUP is not a stop.
  const absl::Time t0 = absl::Now();
  EXPECT_FALSE((*s)->WaitForStop(absl::Milliseconds(100)));
  EXPECT_GE(absl::Now() - t0, absl::Milliseconds(90));
  ASSERT_EQ(raise(SIGHUP), 0);
  EXPECT_FALSE((*s)->WaitForStop(absl::Milliseconds(50)));
  ASSERT_EQ(raise(SIGINT), 0);
  EXPECT_TRUE((*s)->WaitForStop(absl::Seconds(10)));
  EXPECT_FALSE((*s)->WaitForStop(absl::Milliseconds(10)));
  // The SIGHUP stayed pending for the next Wait().
  EXPECT_EQ((*s)->Wait(&name), StopSignal::Request::kReload);
}
#else
TEST(StopSignalTest, ConsoleEventsBecomeStopRequests) {
  absl::StatusOr<std::unique_ptr<StopSignal>> s = StopSignal::Install();
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_FALSE((*s)->WaitForStop(absl::Milliseconds(100)));
  // Console events need a console: a test run with its output in a pipe has
  // none, and AllocConsole() gives it one (it fails, harmlessly, when there
  // is one already). Then Ctrl-Break to our own process group (Ctrl-C can
  // be disabled for a group).
  AllocConsole();
  ASSERT_TRUE(GenerateConsoleCtrlEvent(CTRL_BREAK_EVENT, 0)) << GetLastError();
  std::string name;
  EXPECT_EQ((*s)->Wait(&name), StopSignal::Request::kStop);
  EXPECT_EQ(name, "CTRL_BREAK_EVENT");
  ASSERT_TRUE(GenerateConsoleCtrlEvent(CTRL_BREAK_EVENT, 0));
  EXPECT_TRUE((*s)->WaitForStop(absl::Seconds(10)));
  EXPECT_FALSE((*s)->WaitForStop(absl::Milliseconds(10)));
}
#endif

}  // namespace
}  // namespace dmls::server
