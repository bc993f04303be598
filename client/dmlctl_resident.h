// dmlctl's commands on resident tensors and chains:
//
//   upload IN.npy [--ttl=SECONDS] [--chunk-bytes=4M] [--progress] [--json]
//       a new tensor with the array (packed); prints its handle
//   download HANDLE --output=OUT.npy [--chunk-bytes=N] [--progress]
//   download HANDLE --output=OUT.bin --raw [--offset=N] [--length=N]
//       the tensor's elements as .npy, or a byte range of its buffer as is
//   ls [--json]     the caller's tensors, bytes held and quota
//   rm HANDLE...    releases tensors
//   run CHAIN.json [--input=IN.npy] [--output=OUT.npy | --output-dir=DIR]
//       a dmlserve.v1.ChainRequest in proto3 JSON, run on the device in one
//       submission. Descriptors may leave out what dmlctl can work out: a
//       step's input from an earlier step or a handle takes that tensor's
//       layout, an output takes its input's, and --input binds the first
//       step's input. Returned outputs go to --output (one) or
//       DIR/step<N>.npy; kept ones are printed as "step N: HANDLE".
//
// Resident tensors belong to a principal: these commands need --tenant (or
// DMLS_TENANT), since without one the server keys tensors by connection and
// each dmlctl process would see none of the last one's. Each command returns
// dmlctl's exit status (0, ctl::kExitRejected, ctl::kExitUsage).
#ifndef DMLSERVE_CLIENT_DMLCTL_RESIDENT_H_
#define DMLSERVE_CLIENT_DMLCTL_RESIDENT_H_

#include "client/dml_client.h"
#include "client/dmlctl_common.h"
#include "client/tensor_client.h"
#include "dmlserve/v1/dmlserve.pb.h"

namespace dmls::client::ctl {

int UploadCommand(TensorClient& tensors, const Args& args);
int DownloadCommand(TensorClient& tensors, const Args& args);
int ListCommand(TensorClient& tensors, const Args& args);
int ReleaseCommand(TensorClient& tensors, const Args& args);
int ChainCommand(DmlClient& client, TensorClient& tensors,
                 dmlserve::v1::ChainRequest chain, const Args& args);

// The transfer options of --chunk-bytes, --ttl and --progress.
absl::StatusOr<TransferOptions> TransferOptionsFromArgs(const Args& args,
                                                        const char* label);

}  // namespace dmls::client::ctl

#endif  // DMLSERVE_CLIENT_DMLCTL_RESIDENT_H_
