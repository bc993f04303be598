#include "engine/core/thread_name.h"

#include <string>
#include <thread>

#include "gtest/gtest.h"

#if defined(__linux__)
#include <pthread.h>
#endif

namespace dmls {
namespace {

#if defined(__linux__)
std::string CurrentName() {
  char buf[32] = {};
  EXPECT_EQ(pthread_getname_np(pthread_self(), buf, sizeof(buf)), 0);
  return buf;
}

// The name a new thread reads back after SetThreadName(name).
std::string NameSeenBy(const std::string& name) {
  std::string seen;
  std::thread t([&] {
    SetThreadName(name);
    seen = CurrentName();
  });
  t.join();
  return seen;
}

TEST(ThreadNameTest, NamesTheCallingThreadOnly) {
  const std::string main_name = CurrentName();
  EXPECT_EQ(NameSeenBy("dmls-dispatch"), "dmls-dispatch");
  EXPECT_EQ(CurrentName(), main_name);
}

TEST(ThreadNameTest, KeepsTheFirstFifteenBytesOfALongName) {
  EXPECT_EQ(NameSeenBy("dmls-a-name-longer-than-fifteen"), "dmls-a-name-lon");
}
#endif

}  // namespace
}  // namespace dmls
