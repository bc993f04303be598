#include "tests/conformance/differential.h"

#include <map>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "engine/core/execute_sync.h"
#include "engine/cpu/tensor_access.h"
#include "engine/ops/schema.h"
#include "tests/conformance/tolerance.h"

namespace dmls::conformance {
namespace {

// Element `i` of packed `elements` of `type`, printed exactly enough to
// tell two float32 values apart.
std::string Element(DataType type, const std::string& elements, uint64_t i) {
  const char* p = elements.data();
  switch (type) {
    case DataType::kFloat32:
    case DataType::kFloat16:
      return absl::StrFormat("%.9g", cpu::LoadFloat(type, p, i));
    case DataType::kInt32:
      return absl::StrCat(cpu::Load<int32_t>(p, i));
    case DataType::kUint32:
      return absl::StrCat(cpu::Load<uint32_t>(p, i));
    case DataType::kInt16:
      return absl::StrCat(cpu::Load<int16_t>(p, i));
    case DataType::kUint16:
      return absl::StrCat(cpu::Load<uint16_t>(p, i));
    case DataType::kInt8:
      return absl::StrCat(cpu::Load<int8_t>(p, i));
    case DataType::kUint8:
      return absl::StrCat(cpu::Load<uint8_t>(p, i));
    default:
      return "?";
  }
}


std::string List(const std::vector<uint64_t>& v) {
  return absl::StrCat("[", absl::StrJoin(v, ","), "]");
}

std::string Describe(const TensorDesc& t) {
  std::string s =
      absl::StrCat(std::string(DataTypeName(t.type())), " sizes ", List(t.sizes), " strides ",
                   t.strides ? List(*t.strides) : "NULL", " bytes ", t.total_tensor_size_in_bytes);
  if (t.guaranteed_base_offset_alignment != 0) {
    absl::StrAppend(&s, " alignment ", t.guaranteed_base_offset_alignment);
  }
  if (t.flags != 0) absl::StrAppend(&s, " flags ", t.flags);
  return s;
}

std::string Param(const char* name, const std::optional<float>& v) {
  return v ? absl::StrFormat(" %s %.9g", name, *v) : "";
}

// The operator's attributes, for the errors of theirs.
std::string Attributes(const OperatorDesc& op) {
  std::string s =
      absl::StrCat(Param("min", op.min), Param("max", op.max), Param("p0", op.activation[0]),
                   Param("p1", op.activation[1]), Param("epsilon", op.epsilon));
  if (op.scale_bias) {
    absl::StrAppend(&s, Param("scale", op.scale_bias->scale), Param("bias", op.scale_bias->bias));
  }
  if (!op.axes.empty()) absl::StrAppend(&s, " axes ", List(op.axes));
  if (op.fused_activation) {
    absl::StrAppend(&s, " fused ", ops::OperatorTypeName(op.fused_activation->type),
                    Param("f0", op.fused_activation->params[0]),
                    Param("f1", op.fused_activation->params[1]));
  }
  if (op.scale) absl::StrAppend(&s, "; scale ", Describe(*op.scale));
  if (op.bias) absl::StrAppend(&s, "; bias ", Describe(*op.bias));
  return s;
}

std::string Cell(std::string s) { return absl::StrReplaceAll(s, {{"|", "\\|"}, {"\n", " "}}); }

}  // namespace

const char* KindName(DiffRow::Kind kind) {
  switch (kind) {
    case DiffRow::Kind::kAgree:
      return "agree";
    case DiffRow::Kind::kDisagree:
      return "disagree";
    case DiffRow::Kind::kRefused:
      return "refused";
    case DiffRow::Kind::kTheirsFailed:
      return "failed";
    case DiffRow::Kind::kOursFailed:
      return "ours failed";
  }
  return "?";
}

DiffRow DiffCase(const Case& c, Engine& ours, Engine& theirs) {
  const ExecuteRequest request = RequestFromCase(c);
  const OperatorDesc& op = request.op;
  DiffRow row;
  row.id = c.id();
  row.op = ops::OperatorTypeName(op.type);
  row.dtype = c.output_dtype();
  const absl::StatusOr<ExecuteResult> a = ExecuteSync(ours, request);
  const absl::StatusOr<ExecuteResult> b = ExecuteSync(theirs, request);
  RunOptions exact;
  exact.accept_ftz = false;
  row.ours_conforms = !CheckResult(c, op, request.in_place, a, exact).has_value();
  row.theirs_conforms = !CheckResult(c, op, request.in_place, b, RunOptions{}).has_value();
  if (!a.ok()) {
    row.kind = DiffRow::Kind::kOursFailed;
    row.detail = a.status().ToString();
    return row;
  }
  if (!b.ok()) {
    row.kind = absl::IsInvalidArgument(b.status()) ? DiffRow::Kind::kRefused
                                                   : DiffRow::Kind::kTheirsFailed;
    row.detail = absl::StrCat(b.status().ToString(), "; input ", Describe(*op.input), "; output ",
                              Describe(*op.output), request.in_place ? "; in place" : "",
                              "; attributes", Attributes(op));
    return row;
  }
  const DataType type = op.output->type();
  const std::optional<std::string> ours_el = GatherElements(*op.output, a->output);
  const std::optional<std::string> theirs_el = GatherElements(*op.output, b->output);
  if (!ours_el || !theirs_el) {
    row.kind = !ours_el ? DiffRow::Kind::kOursFailed : DiffRow::Kind::kRefused;
    row.detail = "output shorter than its tensor";
    return row;
  }
  const uint64_t count = ours_el->size() / ElementBytes(type);
  const absl::StatusOr<Tolerance> tolerance = ToleranceFor(c.tolerance_class(), type);
  if (!tolerance.ok()) {
    row.kind = DiffRow::Kind::kOursFailed;
    row.detail = tolerance.status().ToString();
    return row;
  }
  // NaN where ours has a number is accepted only in the nan_sensitive cases
  // (§7.3: min/max that propagate NaN conform there), as the runner does.
  const bool allow_nan = c.nan_sensitive();
  const std::optional<Mismatch> m =
      c.expected_ftz().empty() || type != DataType::kFloat32
          ? CompareElements(*theirs_el, *ours_el, type, count, *tolerance, allow_nan)
          : CompareElementsWithAlternative(*theirs_el, *ours_el, c.expected_ftz(), type, count,
                                           *tolerance, allow_nan);
  if (!m) return row;
  row.kind = DiffRow::Kind::kDisagree;
  row.detail = absl::StrCat(m->message, "; attributes", Attributes(op));
  row.element = m->index;
  row.ours = Element(type, *ours_el, m->index);
  row.theirs = Element(type, *theirs_el, m->index);
  const std::optional<std::string> in_el = GatherElements(*op.input, request.input.ToString());
  const DataType in_type = op.input->type();
  if (in_el && m->index < in_el->size() / ElementBytes(in_type)) {
    row.input = Element(in_type, *in_el, m->index);
  }
  return row;
}

std::string DiffMarkdown(const std::vector<DiffRow>& rows) {
  std::map<std::pair<std::string, std::string>, std::map<DiffRow::Kind, int>> counts;
  for (const DiffRow& r : rows) ++counts[{r.op, r.dtype}][r.kind];
  std::string md =
      "| operator | output type | cases | agree | disagree | refused by DirectML | DirectML "
      "failed | ours failed |\n"
      "|---|---|---|---|---|---|---|---|\n";
  for (const auto& entry : counts) {
    const auto& key = entry.first;
    const std::map<DiffRow::Kind, int>& by_kind = entry.second;  // a lambda can't capture a binding
    int total = 0;
    for (const auto& [kind, count] : by_kind) total += count;
    auto n = [&by_kind](DiffRow::Kind k) {
      auto it = by_kind.find(k);
      return it == by_kind.end() ? 0 : it->second;
    };
    absl::StrAppend(&md, "| ", key.first, " | ", key.second, " | ", total, " | ",
                    n(DiffRow::Kind::kAgree), " | ", n(DiffRow::Kind::kDisagree), " | ",
                    n(DiffRow::Kind::kRefused), " | ", n(DiffRow::Kind::kTheirsFailed), " | ",
                    n(DiffRow::Kind::kOursFailed), " |\n");
  }
  absl::StrAppend(&md,
                  "\n| case | kind | element | input | ours | DirectML | ours vs oracle | "
                  "DirectML vs oracle | detail |\n|---|---|---|---|---|---|---|---|---|\n");
  for (const DiffRow& r : rows) {
    if (r.kind == DiffRow::Kind::kAgree) continue;
    const bool values = r.kind == DiffRow::Kind::kDisagree;
    absl::StrAppend(&md, "| ", Cell(r.id), " | ", KindName(r.kind), " | ",
                    values ? absl::StrCat(r.element) : "", " | ", r.input, " | ", r.ours, " | ",
                    r.theirs, " | ", r.ours_conforms ? "conforms" : "fails", " | ",
                    r.theirs_conforms ? "conforms" : "fails", " | ", Cell(r.detail), " |\n");
  }
  return md;
}

}  // namespace dmls::conformance
