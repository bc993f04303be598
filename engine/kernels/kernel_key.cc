#include "engine/kernels/kernel_key.h"

#include "absl/strings/str_cat.h"

namespace dmls::gpu {

bool KernelKey::operator==(const KernelKey& o) const {
  return stage == o.stage && op == o.op && data_type == o.data_type &&
         layout == o.layout && scale_bias == o.scale_bias &&
         normalize_variance == o.normalize_variance && has_scale == o.has_scale &&
         has_bias == o.has_bias && fused == o.fused && variant == o.variant;
}

uint64_t KernelKey::Packed() const {
  uint64_t v = static_cast<uint64_t>(stage);
  v = v << 8 | (static_cast<uint32_t>(op) & 0xff);
  v = v << 4 | (static_cast<uint32_t>(data_type) & 0xf);
  v = v << 1 | static_cast<uint64_t>(layout);
  v = v << 1 | scale_bias;
  v = v << 1 | normalize_variance;
  v = v << 1 | has_scale;
  v = v << 1 | has_bias;
  v = v << 8 | (static_cast<uint32_t>(fused) & 0xff);
  v = v << 8 | variant;
  return v;
}

uint64_t KernelKey::Hash() const {
  // splitmix64 finaliser over the packed fields.
  uint64_t z = Packed() + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

std::string KernelKey::DebugString() const {
  static const char* kStages[] = {"elementwise", "mvn_partial", "mvn_apply",
                                  "mvn_row",     "mvn_coop",    "mvn_clear",
                                  "mvn_combine", "mvn_normalise"};
  const int s = static_cast<int>(stage);
  std::string out = s < 8 ? kStages[s] : "stage?";
  out += absl::StrCat(" op=", static_cast<uint32_t>(op), " type=");
  out += std::string(DataTypeName(data_type));
  out += layout == LayoutClass::kContiguous ? " contiguous" : " strided";
  if (scale_bias) out += " scale_bias";
  if (stage != KernelStage::kElementwise) {
    out += normalize_variance ? " normvar" : " nonorm";
    if (has_scale) out += " scale";
    if (has_bias) out += " bias";
    out += absl::StrCat(" fused=", static_cast<uint32_t>(fused));
  }
  out += absl::StrCat(" variant=", static_cast<uint32_t>(variant));
  return out;
}

}  // namespace dmls::gpu
