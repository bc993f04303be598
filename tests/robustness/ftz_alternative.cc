#include "tests/robustness/ftz_alternative.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "google/protobuf/descriptor.h"

namespace dmls::robustness {
namespace {

using google::protobuf::FieldDescriptor;

bool IsDenormal(float v) { return std::fpclassify(v) == FP_SUBNORMAL; }
float Flushed(float v) { return std::signbit(v) ? -0.0f : 0.0f; }

}  // namespace

int FlushDenormalFloatFields(google::protobuf::Message& m) {
  const google::protobuf::Reflection* r = m.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  r->ListFields(m, &fields);  // the fields set (and every repeated one)
  int changed = 0;
  for (const FieldDescriptor* f : fields) {
    if (f->cpp_type() == FieldDescriptor::CPPTYPE_FLOAT) {
      if (f->is_repeated()) {
        for (int i = 0; i < r->FieldSize(m, f); ++i) {
          const float v = r->GetRepeatedFloat(m, f, i);
          if (!IsDenormal(v)) continue;
          r->SetRepeatedFloat(&m, f, i, Flushed(v));
          ++changed;
        }
      } else if (IsDenormal(r->GetFloat(m, f))) {
        r->SetFloat(&m, f, Flushed(r->GetFloat(m, f)));
        ++changed;
      }
    } else if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (f->is_repeated()) {
        for (int i = 0; i < r->FieldSize(m, f); ++i) {
          changed += FlushDenormalFloatFields(*r->MutableRepeatedMessage(&m, f, i));
        }
      } else {
        changed += FlushDenormalFloatFields(*r->MutableMessage(&m, f));
      }
    }
  }
  return changed;
}

std::string FlushDenormalWords(const std::string& payload, int* changed) {
  std::string out = payload;
  for (size_t at = 0; at + 4 <= out.size(); at += 4) {
    float v;
    std::memcpy(&v, out.data() + at, 4);  // little-endian host (x86-64, ARM64)
    if (!IsDenormal(v)) continue;
    const float z = Flushed(v);
    std::memcpy(out.data() + at, &z, 4);
    ++*changed;
  }
  return out;
}

}  // namespace dmls::robustness
