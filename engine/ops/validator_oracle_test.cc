// Conformance of the validator with the reference oracle: replays the cases
// of testdata/validation_cases.txt (generated from oracle.validate_rule by
// tests/gen/gen_validation_cases.py; the line format is documented there)
// and checks that the first violation is the oracle's rule.
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/operator_desc.h"
#include "engine/ops/validator.h"
#include "gtest/gtest.h"

#ifndef DMLS_OPS_TESTDATA_DIR
#error "DMLS_OPS_TESTDATA_DIR must name engine/ops/testdata"
#endif

namespace dmls::ops {
namespace {

// Splits on `sep`, keeping empty fields.
std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    const size_t pos = s.find(sep, start);
    out.push_back(s.substr(start, pos - start));
    if (pos == std::string_view::npos) return out;
    start = pos + 1;
  }
}

struct Case {
  int line = 0;
  std::string text;
  uint32_t fl = 0;
  bool in_place = false;
  std::string expect;  // "-" = valid
  OperatorDesc op;
};

// Parsing helpers: they set *ok = false on malformed text.
uint64_t U64(std::string_view s, bool* ok) {
  std::string str(s);
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(str.c_str(), &end, 0);
  if (str.empty() || *end != '\0' || errno != 0) *ok = false;
  return v;
}

std::optional<float> Float(std::string_view s, bool* ok) {
  if (s == "-") return std::nullopt;
  std::string str(s);
  char* end = nullptr;
  const double v = std::strtod(str.c_str(), &end);
  if (str.empty() || *end != '\0') *ok = false;
  return static_cast<float>(v);  // the file holds binary32 values
}

std::vector<uint64_t> List(std::string_view s, bool* ok) {
  std::vector<uint64_t> v;
  if (s == ".") return v;
  for (std::string_view part : Split(s, ',')) v.push_back(U64(part, ok));
  return v;
}

TensorDesc Tensor(std::string_view s, bool* ok) {
  std::vector<std::string_view> f = Split(s, '/');
  TensorDesc t;
  if (f.size() != 8) {
    *ok = false;
    return t;
  }
  t.tensor_type = static_cast<uint32_t>(U64(f[0], ok));
  t.data_type = static_cast<uint32_t>(U64(f[1], ok));
  t.flags = static_cast<uint32_t>(U64(f[2], ok));
  if (f[3] != "-") t.dimension_count = static_cast<uint32_t>(U64(f[3], ok));
  t.sizes = List(f[4], ok);
  if (f[5] != "-") t.strides = List(f[5], ok);
  t.total_tensor_size_in_bytes = U64(f[6], ok);
  t.guaranteed_base_offset_alignment = U64(f[7], ok);
  return t;
}

bool ParseCase(const std::string& line, Case* c) {
  bool ok = true;
  std::map<std::string_view, std::string_view> kv;
  for (std::string_view tok : Split(line, ' ')) {
    if (tok.empty()) continue;
    const size_t eq = tok.find('=');
    if (eq == std::string_view::npos) return false;
    kv[tok.substr(0, eq)] = tok.substr(eq + 1);
  }
  for (const char* key : {"fl", "op", "inplace", "expect"}) {
    if (!kv.count(key)) return false;
  }
  c->text = line;
  c->fl = static_cast<uint32_t>(U64(kv["fl"], &ok));
  c->op.type = static_cast<uint32_t>(U64(kv["op"], &ok));
  c->in_place = kv["inplace"] == "1";
  c->expect = std::string(kv["expect"]);
  OperatorDesc& op = c->op;
  if (kv.count("in")) op.input = Tensor(kv["in"], &ok);
  if (kv.count("sc")) op.scale = Tensor(kv["sc"], &ok);
  if (kv.count("bi")) op.bias = Tensor(kv["bi"], &ok);
  if (kv.count("out")) op.output = Tensor(kv["out"], &ok);
  if (kv.count("min")) op.min = Float(kv["min"], &ok);
  if (kv.count("max")) op.max = Float(kv["max"], &ok);
  if (kv.count("sbs") || kv.count("sbb")) {
    op.scale_bias.emplace();
    if (kv.count("sbs")) op.scale_bias->scale = Float(kv["sbs"], &ok);
    if (kv.count("sbb")) op.scale_bias->bias = Float(kv["sbb"], &ok);
  }
  if (kv.count("a0")) op.activation[0] = Float(kv["a0"], &ok);
  if (kv.count("a1")) op.activation[1] = Float(kv["a1"], &ok);
  if (kv.count("axc")) op.axis_count = U64(kv["axc"], &ok);
  if (kv.count("axes")) op.axes = List(kv["axes"], &ok);
  if (kv.count("nv"))
    op.normalize_variance = static_cast<uint32_t>(U64(kv["nv"], &ok));
  if (kv.count("cc"))
    op.cross_channel = static_cast<uint32_t>(U64(kv["cc"], &ok));
  if (kv.count("eps")) op.epsilon = Float(kv["eps"], &ok);
  if (kv.count("fa")) {
    std::vector<std::string_view> f = Split(kv["fa"], '/');
    if (f.size() != 4) return false;
    FusedActivationDesc fa;
    fa.type = static_cast<uint32_t>(U64(f[0], &ok));
    fa.has_tensors = f[1] == "1";
    fa.params = {Float(f[2], &ok), Float(f[3], &ok)};
    op.fused_activation = fa;
  }
  return ok;
}

std::vector<Case> LoadCases() {
  const std::string path =
      std::string(DMLS_OPS_TESTDATA_DIR) + "/validation_cases.txt";
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  std::vector<Case> cases;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty() || line[0] == '#') continue;
    Case c;
    c.line = n;
    EXPECT_TRUE(ParseCase(line, &c)) << path << ":" << n << ": " << line;
    cases.push_back(std::move(c));
  }
  return cases;
}

TEST(ValidatorOracleTest, FirstViolationMatchesTheOracle) {
  const std::vector<Case> cases = LoadCases();
  ASSERT_GE(cases.size(), 300u);
  std::map<std::string, int> by_rule;
  int failures = 0;
  for (const Case& c : cases) {
    by_rule[c.expect]++;
    const std::vector<Violation> v = ValidateAll(c.op, c.fl, c.in_place);
    const std::string got = v.empty() ? "-" : v.front().rule;
    if (got != c.expect) {
      ++failures;
      ADD_FAILURE_AT(__FILE__, c.line)
          << "case at line " << c.line << ": oracle " << c.expect << ", got "
          << (v.empty() ? "-" : v.front().Description()) << "\n  " << c.text;
      if (failures >= 25) break;
    }
  }
  // The data must exercise valid descriptors and every rule of the §9
  // catalogue that has a C++ form (42, see validator_test.cc) plus "-".
  EXPECT_GE(by_rule["-"], 100);
  EXPECT_EQ(by_rule.size(), 43u);
}

}  // namespace
}  // namespace dmls::ops
