// echo_server: dmlserve.v1.DmlService answered by EchoService (input bytes
// back as output), with dmlserve's server settings where they matter for a
// fair anchor: the gRPC callback API with gRPC's default threads (neither
// binary sets any), 256 MiB message limits, SO_REUSEPORT off, health and
// reflection services on. Prints "echo_server listening on HOST:PORT" on
// stdout when ready; SIGTERM/SIGINT shut it down (exit 0). Exit 1 when the
// port cannot be bound or a flag is bad.
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "absl/flags/flag.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/echo/echo_service.h"
#include "bench/echo/echo_tensor_service.h"
#include "bench/flags_help.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"

ABSL_FLAG(std::string, address, "127.0.0.1",
          "Address to listen on (0.0.0.0 or :: for all interfaces).");
ABSL_FLAG(int, port, 50052, "TCP port; 0 picks a free one.");
ABSL_FLAG(uint64_t, max_message_bytes, uint64_t{256} << 20,
          "Largest gRPC message received or sent, in bytes (dmlserve's "
          "default).");
ABSL_FLAG(uint32_t, stream_window, 64,
          "Requests one ExecuteStream may have unanswered before the server "
          "stops reading it (dmlserve's default).");

int main(int argc, char** argv) {
  dmls::bench::ParseCommandLineWithHelp(
      argc, argv,
      "dmlserve.v1.DmlService that echoes each input (benchmark anchor).\n"
      "Usage: echo_server [--address=127.0.0.1] [--port=50052]",
      "bench/echo/echo_main.cc");
  // As server/main.cc: no lock-order graph for gRPC's absl::Mutex locks
  // (Debian's abseil is built without NDEBUG), in the anchor as in dmlserve.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);

  const std::string address = absl::GetFlag(FLAGS_address);
  const int port = absl::GetFlag(FLAGS_port);
  const uint64_t max_message_bytes = absl::GetFlag(FLAGS_max_message_bytes);
  if (port < 0 || port > 65535 || max_message_bytes == 0 ||
      max_message_bytes > static_cast<uint64_t>(INT32_MAX)) {
    std::fprintf(stderr,
                 "echo_server: --port must be in [0, 65535] and "
                 "--max_message_bytes in [1, 2^31)\n");
    return 1;
  }

  // As dmlserve: every thread inherits the blocked mask; sigwait below.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  dmls::echo::EchoService service(absl::GetFlag(FLAGS_stream_window));
  const std::string host = absl::StrContains(address, ':') &&
                                   !absl::StartsWith(address, "[")
                               ? absl::StrCat("[", address, "]")
                               : address;
  const std::string listen = absl::StrCat(host, ":", port);
  int bound_port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort(listen, grpc::InsecureServerCredentials(),
                           &bound_port);
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.RegisterService(&service);
  dmls::echo::EchoTensorService tensors;
  builder.RegisterService(&tensors);
  builder.SetMaxReceiveMessageSize(static_cast<int>(max_message_bytes));
  builder.SetMaxSendMessageSize(static_cast<int>(max_message_bytes));
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || bound_port == 0) {
    std::fprintf(stderr, "echo_server: cannot listen on %s\n", listen.c_str());
    return 1;
  }
  if (auto* health = server->GetHealthCheckService()) {
    health->SetServingStatus("dmlserve.v1.DmlService", true);
    health->SetServingStatus(true);
  }
  std::printf("echo_server listening on %s:%d\n", host.c_str(), bound_port);
  std::fflush(stdout);

  int signal_number = 0;
  sigwait(&signals, &signal_number);
  server->Shutdown(absl::ToChronoTime(absl::Now() + absl::Seconds(2)));
  server->Wait();
  return 0;
}
