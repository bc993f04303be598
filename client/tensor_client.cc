#include "client/tensor_client.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace dmls::client {

namespace v1 = dmlserve::v1;

absl::StatusOr<v1::ResidentTensorInfo> TensorClient::Create(
    const v1::TensorDesc& desc, absl::string_view data, uint64_t ttl_seconds,
    CallError* error) {
  v1::CreateTensorRequest request;
  *request.mutable_desc() = desc;
  request.set_data(std::string(data));
  request.set_ttl_seconds(ttl_seconds);
  return Call(&Stub::CreateTensor, request, error);
}

absl::StatusOr<v1::ResidentTensorInfo> TensorClient::WriteChunks(
    v1::WriteTensorRequest first, absl::string_view data,
    const TransferOptions& options, CallError* error) {
  grpc::ClientContext context;
  Prepare(&context);
  v1::ResidentTensorInfo info;
  auto writer = stub_->WriteTensor(&context, &info);
  first.set_total_bytes(data.size());
  const uint64_t chunk = std::max<uint64_t>(options.chunk_bytes, 1);
  const uint64_t start = first.start_offset();
  bool open = writer->Write(first);
  for (uint64_t done = 0; open && done < data.size(); done += chunk) {
    v1::WriteTensorRequest message;
    v1::TensorChunk* c = message.mutable_chunk();
    c->set_offset(start + done);
    c->set_data(std::string(data.substr(done, chunk)));
    open = writer->Write(message);
    if (open && options.progress) {
      options.progress(done + c->data().size(), data.size());
    }
  }
  if (open) writer->WritesDone();
  grpc::Status status = writer->Finish();
  if (!status.ok()) return FailedCall(status, error);
  return info;
}

absl::StatusOr<v1::ResidentTensorInfo> TensorClient::Upload(
    const v1::TensorDesc& desc, absl::string_view data,
    const TransferOptions& options, CallError* error) {
  // total_bytes 0 would mean "to the end": an empty upload is a Create.
  if (data.empty()) return Create(desc, data, options.ttl_seconds, error);
  v1::WriteTensorRequest first;
  *first.mutable_create()->mutable_desc() = desc;
  first.mutable_create()->set_ttl_seconds(options.ttl_seconds);
  return WriteChunks(std::move(first), data, options, error);
}

absl::StatusOr<v1::ResidentTensorInfo> TensorClient::Write(
    const std::string& handle, uint64_t offset, absl::string_view data,
    const TransferOptions& options, CallError* error) {
  if (data.empty()) return Find(handle);  // nothing to write
  v1::WriteTensorRequest first;
  first.set_handle(handle);
  first.set_start_offset(offset);
  return WriteChunks(std::move(first), data, options, error);
}

absl::StatusOr<std::string> TensorClient::Download(
    const std::string& handle, uint64_t offset, uint64_t length,
    const TransferOptions& options, CallError* error) {
  grpc::ClientContext context;
  Prepare(&context);
  v1::ReadTensorRequest request;
  request.set_handle(handle);
  request.set_offset(offset);
  request.set_length(length);
  request.set_chunk_bytes(options.chunk_bytes);
  auto reader = stub_->ReadTensor(&context, request);
  std::string out;
  if (length != 0) out.reserve(length);
  bool misordered = false;
  v1::TensorChunk chunk;
  while (reader->Read(&chunk)) {
    if (chunk.offset() != offset + out.size()) {
      misordered = true;  // keep reading so the call can finish
      continue;
    }
    out += chunk.data();
    if (options.progress) options.progress(out.size(), length);
  }
  grpc::Status status = reader->Finish();
  if (!status.ok()) return FailedCall(status, error);
  if (misordered || (length != 0 && out.size() != length)) {
    return absl::InternalError(absl::StrCat(
        "ReadTensor ", handle, ": chunks out of order or short (", out.size(),
        " of ", length, " bytes)"));
  }
  return out;
}

absl::Status TensorClient::Release(const std::string& handle,
                                   CallError* error) {
  v1::ReleaseTensorRequest request;
  request.set_handle(handle);
  return Call(&Stub::ReleaseTensor, request, error).status();
}

absl::StatusOr<v1::ListTensorsResponse> TensorClient::List() {
  return Call(&Stub::ListTensors, v1::ListTensorsRequest());
}

absl::StatusOr<v1::ResidentTensorInfo> TensorClient::Find(
    const std::string& handle) {
  absl::StatusOr<v1::ListTensorsResponse> list = List();
  if (!list.ok()) return list.status();
  for (const v1::ResidentTensorInfo& info : list->tensors()) {
    if (info.handle() == handle) return info;
  }
  return absl::NotFoundError(
      absl::StrCat("HANDLE_NOT_FOUND: no tensor '", handle, "' of yours"));
}

}  // namespace dmls::client
