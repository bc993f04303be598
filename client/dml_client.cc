#include "client/dml_client.h"

#include <chrono>
#include <thread>
#include <utility>

#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"

namespace dmls::client {

std::vector<dmlserve::v1::FieldViolation> ViolationsFromStatus(
    const grpc::Status& status) {
  std::vector<dmlserve::v1::FieldViolation> out;
  if (status.error_details().empty()) return out;
  google::rpc::Status details;
  if (!details.ParseFromString(status.error_details())) return out;
  for (const google::protobuf::Any& any : details.details()) {
    google::rpc::BadRequest bad;
    if (!any.UnpackTo(&bad)) continue;
    for (const auto& v : bad.field_violations()) {
      dmlserve::v1::FieldViolation fv;
      fv.set_field(v.field());
      fv.set_description(v.description());
      const size_t colon = v.description().find(':');
      fv.set_rule(colon == std::string::npos ? v.description()
                                             : v.description().substr(0, colon));
      out.push_back(std::move(fv));
    }
  }
  return out;
}

absl::Status ToAbslStatus(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      status.error_message());
}

DmlClient::DmlClient(DmlClientOptions options) : options_(std::move(options)) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(options_.max_message_bytes);
  args.SetMaxSendMessageSize(options_.max_message_bytes);
  channel_ = grpc::CreateCustomChannel(
      options_.target, grpc::InsecureChannelCredentials(), args);
  stub_ = dmlserve::v1::DmlService::NewStub(channel_);
}

void DmlClient::Prepare(grpc::ClientContext* context) const {
  if (options_.timeout != absl::InfiniteDuration()) {
    context->set_deadline(std::chrono::system_clock::now() +
                          absl::ToChronoMilliseconds(options_.timeout));
  }
}

absl::StatusOr<dmlserve::v1::GetCapabilitiesResponse>
DmlClient::GetCapabilities() {
  grpc::ClientContext context;
  Prepare(&context);
  dmlserve::v1::GetCapabilitiesResponse response;
  grpc::Status status = stub_->GetCapabilities(
      &context, dmlserve::v1::GetCapabilitiesRequest(), &response);
  if (!status.ok()) return ToAbslStatus(status);
  return response;
}

absl::StatusOr<dmlserve::v1::ValidateResponse> DmlClient::Validate(
    const dmlserve::v1::ValidateRequest& request) {
  grpc::ClientContext context;
  Prepare(&context);
  dmlserve::v1::ValidateResponse response;
  grpc::Status status = stub_->Validate(&context, request, &response);
  if (!status.ok()) return ToAbslStatus(status);
  return response;
}

absl::StatusOr<dmlserve::v1::ExecuteResponse> DmlClient::Execute(
    const dmlserve::v1::ExecuteRequest& request, CallError* error) {
  grpc::ClientContext context;
  Prepare(&context);
  dmlserve::v1::ExecuteResponse response;
  grpc::Status status = stub_->Execute(&context, request, &response);
  if (status.ok()) return response;
  absl::Status converted = ToAbslStatus(status);
  if (error != nullptr) {
    error->status = converted;
    error->violations = ViolationsFromStatus(status);
  }
  return converted;
}

absl::StatusOr<std::vector<dmlserve::v1::ExecuteResponse>>
DmlClient::ExecuteStream(
    const std::vector<dmlserve::v1::ExecuteRequest>& requests) {
  grpc::ClientContext context;
  Prepare(&context);
  auto stream = stub_->ExecuteStream(&context);
  std::thread writer([&] {
    for (const auto& request : requests) {
      if (!stream->Write(request)) break;  // the stream failed; Finish says why
    }
    stream->WritesDone();
  });
  std::vector<dmlserve::v1::ExecuteResponse> responses;
  dmlserve::v1::ExecuteResponse response;
  while (stream->Read(&response)) responses.push_back(std::move(response));
  writer.join();
  grpc::Status status = stream->Finish();
  if (!status.ok()) return ToAbslStatus(status);
  return responses;
}

}  // namespace dmls::client
