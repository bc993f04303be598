// sync_echo_server: the second, independent anchor of the serving benchmark
// (bench/serving.sh). dmlserve.v1.DmlService written the way gRPC's own
// examples write a server: the synchronous generated API (gRPC's thread
// pool calls each handler), generated message types, default codec, no
// settings of ours beyond the port and the message size, nothing shared with
// dmlserve or echo_server (bench/echo/echo_service.h), whose callback
// reactors are built like dmlserve's. Execute answers {request_id, output =
// input}; ExecuteStream answers each request in order as it is read.
//
// Usage: sync_echo_server [--port=N] [--max_message_bytes=N]
// Prints "sync_echo_server listening on 127.0.0.1:PORT"; stops on SIGTERM or
// SIGINT.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "dmlserve/v1/dmlserve.grpc.pb.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"

namespace {

namespace v1 = dmlserve::v1;

class SyncEchoService final : public v1::DmlService::Service {
 public:
  grpc::Status Execute(grpc::ServerContext*, const v1::ExecuteRequest* request,
                       v1::ExecuteResponse* response) override {
    response->set_request_id(request->request_id());
    response->set_output(request->input());
    return grpc::Status::OK;
  }

  grpc::Status ExecuteStream(
      grpc::ServerContext*,
      grpc::ServerReaderWriter<v1::ExecuteResponse, v1::ExecuteRequest>* stream)
      override {
    v1::ExecuteRequest request;
    v1::ExecuteResponse response;
    while (stream->Read(&request)) {
      response.set_request_id(request.request_id());
      response.set_output(request.input());
      if (!stream->Write(response)) break;
    }
    return grpc::Status::OK;
  }
};

// --name=VALUE as an integer, or `fallback` when absent.
long FlagOr(int argc, char** argv, const char* name, long fallback) {
  const size_t n = std::strlen(name);
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], name, n) == 0 && argv[i][n] == '=') {
      return std::strtol(argv[i] + n + 1, nullptr, 10);
    }
  }
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--port=", 7) != 0 &&
        std::strncmp(argv[i], "--max_message_bytes=", 20) != 0) {
      std::fprintf(stderr, "usage: sync_echo_server [--port=N] [--max_message_bytes=N]\n");
      return 2;
    }
  }
  const long port = FlagOr(argc, argv, "--port", 50053);
  const long max_bytes = FlagOr(argc, argv, "--max_message_bytes", 256L << 20);
  if (port < 0 || port > 65535 || max_bytes <= 0 || max_bytes > INT32_MAX) {
    std::fprintf(stderr, "sync_echo_server: bad --port or --max_message_bytes\n");
    return 2;
  }
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  SyncEchoService service;
  int bound_port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:" + std::to_string(port),
                           grpc::InsecureServerCredentials(), &bound_port);
  builder.RegisterService(&service);
  builder.SetMaxReceiveMessageSize(static_cast<int>(max_bytes));
  builder.SetMaxSendMessageSize(static_cast<int>(max_bytes));
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || bound_port == 0) {
    std::fprintf(stderr, "sync_echo_server: cannot listen\n");
    return 1;
  }
  std::printf("sync_echo_server listening on 127.0.0.1:%d\n", bound_port);
  std::fflush(stdout);
  int signal_number = 0;
  sigwait(&signals, &signal_number);
  server->Shutdown();
  server->Wait();
  return 0;
}
