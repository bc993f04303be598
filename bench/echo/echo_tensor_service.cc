#include "bench/echo/echo_tensor_service.h"

#include <algorithm>
#include <string>

namespace dmls::echo {
namespace {

namespace v1 = dmlserve::v1;

constexpr uint64_t kDefaultChunk = 1 << 20;

class WriteReactor final : public grpc::ServerReadReactor<v1::WriteTensorRequest> {
 public:
  explicit WriteReactor(v1::ResidentTensorInfo* response) : response_(response) {
    StartRead(&request_);
  }
  void OnReadDone(bool ok) override {
    if (!ok) {
      response_->set_size_bytes(received_);
      Finish(grpc::Status::OK);
      return;
    }
    if (!request_.handle().empty()) response_->set_handle(request_.handle());
    received_ += request_.chunk().data().size();
    StartRead(&request_);
  }
  void OnDone() override { delete this; }

 private:
  v1::ResidentTensorInfo* const response_;
  v1::WriteTensorRequest request_;
  uint64_t received_ = 0;
};

class ReadReactor final : public grpc::ServerWriteReactor<v1::TensorChunk> {
 public:
  explicit ReadReactor(const v1::ReadTensorRequest& r)
      : next_(r.offset()),
        end_(r.offset() + r.length()),
        chunk_(r.chunk_bytes() == 0 ? kDefaultChunk : r.chunk_bytes()) {
    if (r.length() == 0) {
      Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "the echo needs a length"));
      return;
    }
    Next();
  }
  void OnWriteDone(bool ok) override {
    if (!ok) {
      Finish(grpc::Status::CANCELLED);
      return;
    }
    Next();
  }
  void OnDone() override { delete this; }

 private:
  void Next() {
    if (next_ == end_) {
      Finish(grpc::Status::OK);
      return;
    }
    const uint64_t n = std::min(chunk_, end_ - next_);
    static const std::string* const zeros = new std::string(uint64_t{64} << 20, '\0');
    msg_.Clear();
    msg_.set_slot(v1::TENSOR_SLOT_OUTPUT);
    msg_.set_offset(next_);
    std::string* data = msg_.mutable_data();
    data->resize(n);
    for (uint64_t at = 0; at < n; at += zeros->size()) {
      std::copy_n(zeros->data(), std::min<uint64_t>(zeros->size(), n - at), data->data() + at);
    }
    next_ += n;
    StartWrite(&msg_);
  }
  uint64_t next_;
  const uint64_t end_;
  const uint64_t chunk_;
  v1::TensorChunk msg_;
};

grpc::ServerUnaryReactor* Done(grpc::CallbackServerContext* context) {
  grpc::ServerUnaryReactor* r = context->DefaultReactor();
  r->Finish(grpc::Status::OK);
  return r;
}

}  // namespace

grpc::ServerUnaryReactor* EchoTensorService::CreateTensor(grpc::CallbackServerContext* context,
                                                         const v1::CreateTensorRequest*,
                                                         v1::ResidentTensorInfo*) {
  return Done(context);
}

grpc::ServerReadReactor<v1::WriteTensorRequest>* EchoTensorService::WriteTensor(
    grpc::CallbackServerContext*, v1::ResidentTensorInfo* response) {
  return new WriteReactor(response);
}

grpc::ServerWriteReactor<v1::TensorChunk>* EchoTensorService::ReadTensor(
    grpc::CallbackServerContext*, const v1::ReadTensorRequest* request) {
  return new ReadReactor(*request);
}

grpc::ServerUnaryReactor* EchoTensorService::ReleaseTensor(grpc::CallbackServerContext* context,
                                                          const v1::ReleaseTensorRequest*,
                                                          v1::ReleaseTensorResponse*) {
  return Done(context);
}

grpc::ServerUnaryReactor* EchoTensorService::ListTensors(grpc::CallbackServerContext* context,
                                                        const v1::ListTensorsRequest*,
                                                        v1::ListTensorsResponse*) {
  return Done(context);
}

}  // namespace dmls::echo
