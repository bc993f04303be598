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

namespace dmls::server {
namespace {

#ifdef __linux__
TEST(SendQueuesTest, CountsWhatThePeerHasNoRoomForUntilItReads) {
  ASSERT_TRUE(UnsentTcpBytes().ok());
  // A loopback connection whose receiver reads nothing at first.
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  int small = 4096;  // inherited by the accepted socket
  setsockopt(listener, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&address), length), 0);
  ASSERT_EQ(listen(listener, 1), 0);
  ASSERT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length), 0);
  const int sender = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_EQ(connect(sender, reinterpret_cast<sockaddr*>(&address), length), 0);
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
