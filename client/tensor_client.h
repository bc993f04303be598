// TensorClient: a small synchronous C++ client of dmlserve.v1.TensorService,
// the server's resident tensors (tensors kept on its device between calls,
// named by handles; see dmlserve.proto).
//
// Uploads and downloads go in chunks, so a tensor of any size moves without
// a message larger than the chunk. A tensor belongs to the caller's
// principal: set DmlClientOptions::tenant so that handles made by one process
// can be used by another. Thread-safe: the stub may be used from several
// threads at once.
#ifndef DMLSERVE_CLIENT_TENSOR_CLIENT_H_
#define DMLSERVE_CLIENT_TENSOR_CLIENT_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "client/dml_client.h"
#include "dmlserve/v1/dmlserve.grpc.pb.h"
#include "dmlserve/v1/dmlserve.pb.h"
#include "grpcpp/grpcpp.h"

namespace dmls::client {

struct TransferOptions {
  // Bytes per chunk; at most the server's max_chunk_bytes (GetCapabilities
  // limits), and below the channel's message limit.
  uint64_t chunk_bytes = 4 << 20;
  // Time to live of a tensor that Upload creates; 0: the server's default.
  uint64_t ttl_seconds = 0;
  ProgressFn progress;  // optional
};

class TensorClient : public ServiceClient<dmlserve::v1::TensorService> {
 public:
  using ServiceClient::ServiceClient;

  // CreateTensor: a tensor with `data` (empty: zeroed, else exactly
  // desc.total_tensor_size_in_bytes) in one message.
  absl::StatusOr<dmlserve::v1::ResidentTensorInfo> Create(
      const dmlserve::v1::TensorDesc& desc, absl::string_view data,
      uint64_t ttl_seconds = 0, CallError* error = nullptr);

  // A new tensor of `desc` holding `data` (its whole buffer range), written
  // in chunks on one WriteTensor stream: it exists only if every chunk
  // arrived.
  absl::StatusOr<dmlserve::v1::ResidentTensorInfo> Upload(
      const dmlserve::v1::TensorDesc& desc, absl::string_view data,
      const TransferOptions& options = {}, CallError* error = nullptr);

  // Overwrites [offset, offset + data.size()) of an existing tensor.
  absl::StatusOr<dmlserve::v1::ResidentTensorInfo> Write(
      const std::string& handle, uint64_t offset, absl::string_view data,
      const TransferOptions& options = {}, CallError* error = nullptr);

  // Reads [offset, offset + length) of a tensor (length 0: to the end).
  absl::StatusOr<std::string> Download(const std::string& handle,
                                       uint64_t offset = 0, uint64_t length = 0,
                                       const TransferOptions& options = {},
                                       CallError* error = nullptr);

  absl::Status Release(const std::string& handle, CallError* error = nullptr);

  // The caller's tensors, with the bytes they hold against the quota.
  absl::StatusOr<dmlserve::v1::ListTensorsResponse> List();

  // The caller's tensor `handle` (from List); NOT_FOUND when it has none.
  absl::StatusOr<dmlserve::v1::ResidentTensorInfo> Find(
      const std::string& handle);

 private:
  // Streams `first` (the handle or create, with the range) and the chunks of
  // `data` on one WriteTensor call.
  absl::StatusOr<dmlserve::v1::ResidentTensorInfo> WriteChunks(
      dmlserve::v1::WriteTensorRequest first, absl::string_view data,
      const TransferOptions& options, CallError* error);
};

}  // namespace dmls::client

#endif  // DMLSERVE_CLIENT_TENSOR_CLIENT_H_
