// dmls_rules_doc: prints docs/RULES.md (the rule table as Markdown), or with
// --check=FILE exits 1 when FILE differs from it (ctest rules_doc_current).
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "engine/ops/rule_table.h"

int main(int argc, char** argv) {
  const std::string text = dmls::ops::RulesMarkdown();
  const std::string check_flag = "--check=";
  if (argc == 2 && std::string(argv[1]).rfind(check_flag, 0) == 0) {
    const std::string path = std::string(argv[1]).substr(check_flag.size());
    std::ifstream in(path, std::ios::binary);
    std::stringstream file;
    file << in.rdbuf();
    if (!in || file.str() != text) {
      std::cerr << path << " is out of date: regenerate it with "
                << argv[0] << " > " << path << "\n";
      return 1;
    }
    return 0;
  }
  if (argc != 1) {
    std::cerr << "usage: dmls_rules_doc [--check=docs/RULES.md]\n";
    return 2;
  }
  std::cout << text;
  return 0;
}
