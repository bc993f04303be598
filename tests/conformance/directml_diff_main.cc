// directml_diff: every conformance case (tests/data/conformance_*.pb, the
// random set included) on the CPU reference engine and on Microsoft's
// DirectML.dll (DmlEngine), compared element by element (differential.h).
// Windows only; deploy/windows/directml-diff.sh runs it under Wine.
//
//   directml_diff.exe [--data DIR] [--dll PATH] [--filter SUBSTRING] [--out FILE.md]
//                     [--expect FILE.tsv] [--write_expect FILE.tsv]
//
// Prints the per-operator summary and writes it, with one row per
// disagreement or refusal, to --out. --write_expect writes every case that
// does not agree, with its kind (diff_expectations.h); --expect compares
// the run with such a file (tests/data/directml_expected.tsv) and prints
// every case whose outcome changed. Exit status 0 when it ran and, with
// --expect, nothing changed; 1 when something changed; 2 on a usage or
// setup error (a malformed --expect file, one naming a case the corpus
// does not have).
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "engine/cpu/cpu_engine.h"
#include "engine/directml/dml_engine.h"
#include "tests/conformance/diff_expectations.h"
#include "tests/conformance/differential.h"

int main(int argc, char** argv) {
  using dmls::conformance::DiffRow;
  std::string data = DMLS_CONFORMANCE_DATA_DIR, filter, out, expect_path, write_expect;
  dmls::directml::DmlEngineOptions options;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--data")
      data = value;
    else if (flag == "--dll")
      options.dll_path = value;
    else if (flag == "--filter")
      filter = value;
    else if (flag == "--out")
      out = value;
    else if (flag == "--expect")
      expect_path = value;
    else if (flag == "--write_expect")
      write_expect = value;
    else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  absl::StatusOr<dmls::conformance::CaseSet> corpus = dmls::conformance::LoadCorpusDir(data);
  if (!corpus.ok()) {
    std::fprintf(stderr, "corpus: %s\n", corpus.status().ToString().c_str());
    return 2;
  }
  if (!write_expect.empty() && !filter.empty()) {
    std::fprintf(stderr, "--write_expect records every case: it does not go with --filter\n");
    return 2;
  }
  dmls::conformance::DiffExpectations expected;
  if (!expect_path.empty()) {
    std::ifstream in(expect_path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    absl::StatusOr<dmls::conformance::DiffExpectations> parsed =
        dmls::conformance::ParseDiffExpectations(text.str());
    if (!in || !parsed.ok()) {
      std::fprintf(stderr, "--expect %s: %s\n", expect_path.c_str(),
                   in ? parsed.status().ToString().c_str() : "cannot read");
      return 2;
    }
    std::set<std::string> ids;
    for (const auto& c : corpus->cases()) ids.insert(c.id());
    for (const auto& [id, kind] : *parsed) {
      if (ids.count(id) == 0) {
        std::fprintf(stderr, "--expect %s: case %s is not in the corpus\n", expect_path.c_str(),
                     id.c_str());
        return 2;
      }
    }
    expected = *std::move(parsed);
  }
  absl::StatusOr<std::unique_ptr<dmls::directml::DmlEngine>> dml =
      dmls::directml::DmlEngine::Create(options);
  if (!dml.ok()) {
    std::fprintf(stderr, "DirectML: %s\n", dml.status().ToString().c_str());
    return 2;
  }
  std::printf("DirectML: %s on %s\n", (*dml)->device_info().backend.c_str(),
              (*dml)->device_info().name.c_str());
  dmls::CpuEngineOptions cpu_options;
  cpu_options.threads = 1;
  dmls::CpuEngine cpu(cpu_options);
  int recreated = 0;
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<DiffRow> rows;
  for (const auto& c : corpus->cases()) {
    if (!filter.empty() && c.id().find(filter) == std::string::npos) continue;
    // A lost device (Wine's vkd3d under DirectML loses it now and then) is
    // replaced, and the case that saw the loss runs once more on the new
    // one; a case that loses it again keeps its "failed" row.
    for (int attempt = 0; attempt < 2; ++attempt) {
      DiffRow row = dmls::conformance::DiffCase(c, cpu, **dml);
      const bool lost = !(*dml)->Healthy();
      if (lost) {
        std::printf("device lost at %s (attempt %d); new DirectML engine\n", c.id().c_str(),
                    attempt + 1);
        std::fflush(stdout);
        dml->reset();
        dml = dmls::directml::DmlEngine::Create(options);
        if (!dml.ok()) {
          std::fprintf(stderr, "DirectML again: %s\n", dml.status().ToString().c_str());
          return 2;
        }
        ++recreated;
      }
      if (!lost || attempt == 1) {
        rows.push_back(std::move(row));
        break;
      }
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  int agree = 0, disagree = 0, refused = 0, theirs_failed = 0, failed = 0;
  for (const DiffRow& r : rows) {
    agree += r.kind == DiffRow::Kind::kAgree;
    disagree += r.kind == DiffRow::Kind::kDisagree;
    refused += r.kind == DiffRow::Kind::kRefused;
    theirs_failed += r.kind == DiffRow::Kind::kTheirsFailed;
    failed += r.kind == DiffRow::Kind::kOursFailed;
  }
  const std::string md = dmls::conformance::DiffMarkdown(rows);
  std::printf(
      "%zu cases in %.1f s: %d agree, %d disagree, %d refused by DirectML, %d failed on DirectML "
      "(%d device losses), %d ours failed\n",
      rows.size(), seconds, agree, disagree, refused, theirs_failed, recreated, failed);
  std::printf("%s", md.substr(0, md.find("\n\n")).c_str());
  std::printf("\n");
  if (!out.empty()) std::ofstream(out) << md;
  if (!write_expect.empty()) {
    std::ofstream(write_expect, std::ios::binary) << dmls::conformance::DiffExpectationsText(
        rows, "DirectML against the CPU engine (deploy/windows/directml-diff.sh; docs/DIRECTML.md):\n"
              "every conformance case whose outcome is not \"agree\", with its kind.\n"
              "A case not listed must agree. Regenerate with directml-diff.sh --write-expect.");
  }
  if (!expect_path.empty()) {
    const std::vector<std::string> changes = dmls::conformance::DiffChanges(rows, expected);
    for (const std::string& change : changes) std::printf("CHANGED %s\n", change.c_str());
    std::printf("%zu of %zu cases as %s expects\n", rows.size() - changes.size(), rows.size(),
                expect_path.c_str());
    return changes.empty() ? 0 : 1;
  }
  return 0;
}
