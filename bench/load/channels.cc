#include "bench/load/channels.h"

#include "absl/strings/str_cat.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"

namespace dmls::load {

absl::StatusOr<std::vector<std::shared_ptr<grpc::Channel>>> MakeChannels(
    const std::string& target, uint32_t count, absl::Duration connect_timeout) {
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  const auto deadline =
      std::chrono::system_clock::now() + absl::ToChronoMilliseconds(connect_timeout);
  for (uint32_t i = 0; i < count; ++i) {
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(-1);
    args.SetMaxSendMessageSize(-1);
    // Channels with equal arguments share subchannels (and so one TCP
    // connection); an argument of our own keeps them apart.
    args.SetInt("dmls_load.channel_index", static_cast<int>(i));
    auto channel = grpc::CreateCustomChannel(
        target, grpc::InsecureChannelCredentials(), args);
    if (!channel->WaitForConnected(deadline)) {
      return absl::UnavailableError(
          absl::StrCat("cannot connect to ", target, " (channel ", i, ") within ",
                       absl::FormatDuration(connect_timeout)));
    }
    channels.push_back(std::move(channel));
  }
  return channels;
}

}  // namespace dmls::load
