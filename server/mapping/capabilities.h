// The GetCapabilities answer, built from the operator schema tables, the
// engine's device and the server limits. Built once at startup (the inputs
// do not change while serving). Stateless function: thread-safe.
#ifndef DMLSERVE_SERVER_MAPPING_CAPABILITIES_H_
#define DMLSERVE_SERVER_MAPPING_CAPABILITIES_H_

#include "dmlserve/v1/dmlserve.pb.h"
#include <vector>

#include "engine/core/engine.h"
#include "engine/core/types.h"
#include "server/options/server_options.h"

namespace dmls::server {

// Every operator of the schema with every support tier, its in-place and
// fusion support, tolerance class and parameter names (the non-tensor fields
// of its proto message); the feature levels up to `highest`; the limits of
// `options`; the device (or summary) of `device` and the list `devices`
// (when empty, `device` alone).
dmlserve::v1::GetCapabilitiesResponse BuildCapabilities(
    const DeviceInfo& device, const std::vector<DeviceInfo>& devices,
    const ServerOptions& options, FeatureLevel highest);

}  // namespace dmls::server

#endif  // DMLSERVE_SERVER_MAPPING_CAPABILITIES_H_
