// directml_diff: every conformance case (tests/data/conformance_*.pb, the
// random set included) on the CPU reference engine and on Microsoft's
// DirectML.dll (DmlEngine), compared element by element (differential.h).
// Windows only; deploy/windows/directml-diff.sh runs it under Wine.
//
//   directml_diff.exe [--data DIR] [--dll PATH] [--filter SUBSTRING] [--out FILE.md]
//
// Prints the per-operator summary and writes it, with one row per
// disagreement or refusal, to --out. Exit status 0 when it ran (however
// many disagreements: they are the result), 2 on a usage or setup error.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "engine/cpu/cpu_engine.h"
#include "engine/directml/dml_engine.h"
#include "tests/conformance/differential.h"

int main(int argc, char** argv) {
  using dmls::conformance::DiffRow;
  std::string data = DMLS_CONFORMANCE_DATA_DIR, filter, out;
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
  return 0;
}
