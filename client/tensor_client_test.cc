#include "client/tensor_client.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "client/in_process_server_test_util.h"
#include "engine/core/mutex.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"

namespace dmls::client {
namespace {

namespace v1 = dmlserve::v1;

// An in-process TensorService over a map, strict about chunk order like the
// real one (CHUNK_OUT_OF_ORDER, CHUNK_MISSING), that records the tenant of
// each call and the chunk sizes it saw.
class FakeTensorService final : public v1::TensorService::Service {
 public:
  grpc::Status CreateTensor(grpc::ServerContext* context,
                            const v1::CreateTensorRequest* request,
                            v1::ResidentTensorInfo* info) override {
    Note(context);
    MutexLock lock(&mu_);
    const uint64_t size = request->desc().total_tensor_size_in_bytes();
    std::string data = request->data().empty() ? std::string(size, '\0')
                                               : request->data();
    return Store(request->desc(), std::move(data), request->ttl_seconds(),
                 info);
  }

  grpc::Status WriteTensor(grpc::ServerContext* context,
                           grpc::ServerReader<v1::WriteTensorRequest>* reader,
                           v1::ResidentTensorInfo* info) override {
    Note(context);
    v1::WriteTensorRequest first;
    if (!reader->Read(&first)) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "empty");
    }
    std::string data;
    v1::TensorDesc desc;
    {
      MutexLock lock(&mu_);
      if (first.has_create()) {
        desc = first.create().desc();
        data.assign(desc.total_tensor_size_in_bytes(), '\0');
      } else if (tensors_.count(first.handle()) != 0) {
        desc = tensors_[first.handle()].desc();
        data = bytes_[first.handle()];
      } else {
        return grpc::Status(grpc::StatusCode::NOT_FOUND, "HANDLE_NOT_FOUND");
      }
    }
    uint64_t next = first.start_offset();
    const uint64_t end = next + first.total_bytes();
    v1::WriteTensorRequest message;
    while (reader->Read(&message)) {
      if (message.chunk().offset() != next || end > data.size()) {
        return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                            "CHUNK_OUT_OF_ORDER: chunk");
      }
      data.replace(next, message.chunk().data().size(),
                   message.chunk().data());
      next += message.chunk().data().size();
      MutexLock lock(&mu_);
      chunk_sizes_.push_back(message.chunk().data().size());
    }
    if (next != end) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "CHUNK_MISSING");
    }
    MutexLock lock(&mu_);
    if (first.has_create()) {
      return Store(desc, std::move(data), first.create().ttl_seconds(), info);
    }
    bytes_[first.handle()] = std::move(data);
    *info = tensors_[first.handle()];
    return grpc::Status::OK;
  }

  grpc::Status ReadTensor(grpc::ServerContext* context,
                          const v1::ReadTensorRequest* request,
                          grpc::ServerWriter<v1::TensorChunk>* writer) override {
    Note(context);
    std::string data;
    {
      MutexLock lock(&mu_);
      auto it = bytes_.find(request->handle());
      if (it == bytes_.end()) {
        return grpc::Status(grpc::StatusCode::NOT_FOUND, "HANDLE_NOT_FOUND");
      }
      data = it->second;
    }
    const uint64_t end = request->length() == 0
                             ? data.size()
                             : request->offset() + request->length();
    const uint64_t chunk = request->chunk_bytes() == 0 ? 7 : request->chunk_bytes();
    for (uint64_t at = request->offset(); at < end; at += chunk) {
      v1::TensorChunk c;
      c.set_slot(v1::TENSOR_SLOT_OUTPUT);
      c.set_offset(at);
      c.set_data(data.substr(at, std::min(chunk, end - at)));
      writer->Write(c);
    }
    return grpc::Status::OK;
  }

  grpc::Status ReleaseTensor(grpc::ServerContext* context,
                             const v1::ReleaseTensorRequest* request,
                             v1::ReleaseTensorResponse*) override {
    Note(context);
    MutexLock lock(&mu_);
    if (tensors_.erase(request->handle()) == 0) {
      return grpc::Status(grpc::StatusCode::NOT_FOUND, "HANDLE_NOT_FOUND");
    }
    bytes_.erase(request->handle());
    return grpc::Status::OK;
  }

  grpc::Status ListTensors(grpc::ServerContext* context,
                           const v1::ListTensorsRequest*,
                           v1::ListTensorsResponse* response) override {
    Note(context);
    MutexLock lock(&mu_);
    for (const auto& [handle, info] : tensors_) *response->add_tensors() = info;
    return grpc::Status::OK;
  }

  std::string Bytes(const std::string& handle) {
    MutexLock lock(&mu_);
    return bytes_[handle];
  }
  std::vector<uint64_t> ChunkSizes() {
    MutexLock lock(&mu_);
    return chunk_sizes_;
  }
  std::vector<std::string> Tenants() {
    MutexLock lock(&mu_);
    return tenants_;
  }

 private:
  void Note(grpc::ServerContext* context) {
    auto it = context->client_metadata().find("tenant");
    MutexLock lock(&mu_);
    tenants_.push_back(it == context->client_metadata().end()
                           ? ""
                           : std::string(it->second.data(), it->second.size()));
  }

  grpc::Status Store(const v1::TensorDesc& desc, std::string data,
                     uint64_t ttl, v1::ResidentTensorInfo* info)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    info->set_handle("h" + std::to_string(++next_handle_));
    *info->mutable_desc() = desc;
    info->set_size_bytes(data.size());
    info->set_expires_unix_ms(ttl);
    tensors_[info->handle()] = *info;
    bytes_[info->handle()] = std::move(data);
    return grpc::Status::OK;
  }

  Mutex mu_;
  int next_handle_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, v1::ResidentTensorInfo> tensors_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::string> bytes_ ABSL_GUARDED_BY(mu_);
  std::vector<uint64_t> chunk_sizes_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> tenants_ ABSL_GUARDED_BY(mu_);
};

class TensorClientTest : public InProcessServerTest<FakeTensorService> {
 protected:
  void SetUp() override {
    InProcessServerTest::SetUp();
    options_.tenant = "team-a";
  }

  static v1::TensorDesc Desc(uint64_t bytes) {
    v1::TensorDesc desc;
    desc.set_data_type(v1::DATA_TYPE_FLOAT32);
    desc.add_sizes(bytes / 4);
    desc.set_total_tensor_size_in_bytes(bytes);
    return desc;
  }
};

TEST_F(TensorClientTest, UploadInChunksThenDownloadInChunks) {
  TensorClient client(options_);
  std::string data(1000, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 7);
  std::vector<std::pair<uint64_t, uint64_t>> progress;
  TransferOptions transfer;
  transfer.chunk_bytes = 300;
  transfer.ttl_seconds = 42;
  transfer.progress = [&](uint64_t done, uint64_t total) {
    progress.emplace_back(done, total);
  };
  absl::StatusOr<v1::ResidentTensorInfo> info =
      client.Upload(Desc(1000), data, transfer);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->expires_unix_ms(), 42u);  // the fake echoes the ttl here
  EXPECT_EQ(service_.Bytes(info->handle()), data);
  EXPECT_EQ(service_.ChunkSizes(), (std::vector<uint64_t>{300, 300, 300, 100}));
  ASSERT_EQ(progress.size(), 4u);
  EXPECT_EQ(progress.back(), std::make_pair(uint64_t{1000}, uint64_t{1000}));

  TransferOptions small;
  small.chunk_bytes = 64;
  absl::StatusOr<std::string> all = client.Download(info->handle(), 0, 0, small);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(*all, data);
  absl::StatusOr<std::string> part = client.Download(info->handle(), 10, 95, small);
  ASSERT_TRUE(part.ok()) << part.status();
  EXPECT_EQ(*part, data.substr(10, 95));
  for (const std::string& tenant : service_.Tenants()) EXPECT_EQ(tenant, "team-a");
}

TEST_F(TensorClientTest, WriteAtAnOffsetAndEmptyCases) {
  TensorClient client(options_);
  absl::StatusOr<v1::ResidentTensorInfo> info = client.Upload(Desc(16), "");
  ASSERT_TRUE(info.ok()) << info.status();  // empty: a zeroed Create
  EXPECT_EQ(service_.Bytes(info->handle()), std::string(16, '\0'));
  TransferOptions transfer;
  transfer.chunk_bytes = 3;
  ASSERT_TRUE(client.Write(info->handle(), 5, "abcdefg", transfer).ok());
  EXPECT_EQ(service_.Bytes(info->handle()),
            std::string(5, '\0') + "abcdefg" + std::string(4, '\0'));
  absl::StatusOr<v1::ResidentTensorInfo> same = client.Write(info->handle(), 0, "");
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_EQ(same->handle(), info->handle());
}

TEST_F(TensorClientTest, ListFindReleaseAndErrors) {
  TensorClient client(options_);
  absl::StatusOr<v1::ResidentTensorInfo> a = client.Create(Desc(8), "12345678");
  absl::StatusOr<v1::ResidentTensorInfo> b = client.Create(Desc(4), "");
  ASSERT_TRUE(a.ok() && b.ok());
  absl::StatusOr<v1::ListTensorsResponse> list = client.List();
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->tensors_size(), 2);
  absl::StatusOr<v1::ResidentTensorInfo> found = client.Find(b->handle());
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(found->size_bytes(), 4u);
  ASSERT_TRUE(client.Release(a->handle()).ok());
  CallError error;
  EXPECT_EQ(client.Release(a->handle(), &error).code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(error.status.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(client.Find(a->handle()).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(client.Download(a->handle()).status().code(),
            absl::StatusCode::kNotFound);
  // A write past the end fails with the server's status.
  EXPECT_EQ(client.Write(b->handle(), 2, "toolong").status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace dmls::client
