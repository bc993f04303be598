// ParseCommandLineWithHelp: absl::ParseCommandLine for a bench program whose
// flags are all defined in one file, with --help and --helpshort listing
// that file's flags (absl's default looks for a file named after the
// program, which none of these is). Header-only; call once, from main.
#ifndef DMLSERVE_BENCH_FLAGS_HELP_H_
#define DMLSERVE_BENCH_FLAGS_HELP_H_

#include <string>
#include <vector>

#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"

namespace dmls::bench {

// Sets `usage_message` as the program's usage, parses argv (absl ends the
// process for --help, an unknown flag or a bad value) and returns argv[0]
// and the positional arguments. `flags_file`: the path's tail, such as
// "bench/load/load_main.cc".
inline std::vector<char*> ParseCommandLineWithHelp(int argc, char** argv,
                                                   absl::string_view usage_message,
                                                   absl::string_view flags_file) {
  absl::SetProgramUsageMessage(usage_message);
  absl::FlagsUsageConfig usage;
  usage.contains_help_flags = [file = std::string(flags_file)](absl::string_view f) {
    return absl::EndsWith(f, file);
  };
  usage.contains_helpshort_flags = usage.contains_help_flags;
  absl::SetFlagsUsageConfig(usage);
  return absl::ParseCommandLine(argc, argv);
}

}  // namespace dmls::bench

#endif  // DMLSERVE_BENCH_FLAGS_HELP_H_
