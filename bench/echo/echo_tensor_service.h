// EchoTensorService: dmlserve.v1.TensorService with nothing behind it, the
// anchor of the chunked-transfer benchmark (bench/resident): what gRPC
// costs to move a tensor's chunks when storing them is free.
//
// WriteTensor reads every chunk and drops it, answering with the bytes
// received (size_bytes) and the first message's handle. ReadTensor sends
// `length` bytes (which must be given: there is no tensor to measure) in
// chunks of chunk_bytes (1 MiB when 0), each copied out of one static
// buffer as a real server copies its chunk out of staging memory.
// CreateTensor, ReleaseTensor and ListTensors answer empty.
//
// Thread-safe; reactors delete themselves in OnDone.
#ifndef DMLSERVE_BENCH_ECHO_ECHO_TENSOR_SERVICE_H_
#define DMLSERVE_BENCH_ECHO_ECHO_TENSOR_SERVICE_H_

#include "dmlserve/v1/dmlserve.grpc.pb.h"

namespace dmls::echo {

class EchoTensorService final : public dmlserve::v1::TensorService::CallbackService {
 public:
  grpc::ServerUnaryReactor* CreateTensor(
      grpc::CallbackServerContext* context, const dmlserve::v1::CreateTensorRequest* request,
      dmlserve::v1::ResidentTensorInfo* response) override;
  grpc::ServerReadReactor<dmlserve::v1::WriteTensorRequest>* WriteTensor(
      grpc::CallbackServerContext* context, dmlserve::v1::ResidentTensorInfo* response) override;
  grpc::ServerWriteReactor<dmlserve::v1::TensorChunk>* ReadTensor(
      grpc::CallbackServerContext* context,
      const dmlserve::v1::ReadTensorRequest* request) override;
  grpc::ServerUnaryReactor* ReleaseTensor(
      grpc::CallbackServerContext* context, const dmlserve::v1::ReleaseTensorRequest* request,
      dmlserve::v1::ReleaseTensorResponse* response) override;
  grpc::ServerUnaryReactor* ListTensors(
      grpc::CallbackServerContext* context, const dmlserve::v1::ListTensorsRequest* request,
      dmlserve::v1::ListTensorsResponse* response) override;
};

}  // namespace dmls::echo

#endif  // DMLSERVE_BENCH_ECHO_ECHO_TENSOR_SERVICE_H_
