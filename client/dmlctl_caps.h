// `dmlctl caps --summary`: GetCapabilities in one screen (server, devices,
// limits, one line per operator at the server's highest feature level)
// instead of the full JSON. Stateless function: thread-safe.
#ifndef DMLSERVE_CLIENT_DMLCTL_CAPS_H_
#define DMLSERVE_CLIENT_DMLCTL_CAPS_H_

#include <string>

#include "dmlserve/v1/dmlserve.pb.h"

namespace dmls::client::ctl {

// The summary text, ending in a newline.
std::string CapsSummary(const dmlserve::v1::GetCapabilitiesResponse& caps);

}  // namespace dmls::client::ctl

#endif  // DMLSERVE_CLIENT_DMLCTL_CAPS_H_
