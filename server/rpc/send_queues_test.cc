#include "server/rpc/send_queues.h"

#ifdef __linux__
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#endif
#include "gtest/gtest.h"
#include "server/testing/loopback.h"

namespace dmls::server {
namespace {

#ifdef __linux__
TEST(SendQueuesTest, CountsWhatThePeerHasNoRoomForUntilItReads) {
  ASSERT_TRUE(UnsentTcpBytes().ok());
  // A loopback connection whose receiver reads nothing at first.
  int port = 0;
  const int listener = testing::ListenLoopback(&port, /*receive_buffer=*/4096);
  const int sender = testing::ConnectLoopback(port);
  const int receiver = accept(listener, nullptr, nullptr);
  ASSERT_GE(receiver, 0);
  const uint64_t before = *UnsentTcpBytes();

  // Write until the receiver's window and the send buffer are full.
  fcntl(sender, F_SETFL, fcntl(sender, F_GETFL) | O_NONBLOCK);
  std::vector<char> bytes(1 << 16, 'x');
  while (write(sender, bytes.data(), bytes.size()) > 0) {
  }
  EXPECT_GT(*UnsentTcpBytes(), before);

  // Once the receiver has read everything, nothing is left unsent.
  fcntl(receiver, F_SETFL, fcntl(receiver, F_GETFL) | O_NONBLOCK);
  const absl::Time give_up = absl::Now() + absl::Seconds(10);
  uint64_t left = 1;
  while (absl::Now() < give_up) {
    while (read(receiver, bytes.data(), bytes.size()) > 0) {
    }
    left = *UnsentTcpBytes();
    if (left <= before) break;
    absl::SleepFor(absl::Milliseconds(1));
  }
  EXPECT_LE(left, before);
  close(sender);
  close(receiver);
  close(listener);
}
#endif

}  // namespace
}  // namespace dmls::server
