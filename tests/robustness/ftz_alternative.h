// The §7.5 alternative (OPERATORS.md) of a robustness mutant: a device may
// flush float32 denormals at the input of its arithmetic, parameters
// included, so the request with every binary32 denormal parameter and
// every FLOAT32 payload element flushed to a zero of its sign also gives a
// conformant result, unless flushing a parameter makes the descriptor
// invalid (then only the exact result conforms). The conformance corpus
// stores that result beside the exact one (expected_ftz); the robustness
// test's mutants are made at run time, so it asks the CPU engine for it.
// Stateless; thread-safe for distinct arguments.
#ifndef DMLSERVE_TESTS_ROBUSTNESS_FTZ_ALTERNATIVE_H_
#define DMLSERVE_TESTS_ROBUSTNESS_FTZ_ALTERNATIVE_H_

#include <string>

#include "google/protobuf/message.h"

namespace dmls::robustness {

// Replaces every denormal value of a float (binary32) field of `m` and of
// its submessages, singular or repeated, with a zero of its sign. Returns
// how many values it changed.
int FlushDenormalFloatFields(google::protobuf::Message& m);

// `payload` with every whole 4-byte little-endian word that is a float32
// denormal replaced by a zero of its sign (for a FLOAT32 tensor's payload;
// a trailing partial word is kept). Adds the words changed to `*changed`.
std::string FlushDenormalWords(const std::string& payload, int* changed);

}  // namespace dmls::robustness

#endif  // DMLSERVE_TESTS_ROBUSTNESS_FTZ_ALTERNATIVE_H_
