// Prepares fuzzing inputs (run by fuzz/make_corpus.sh; not a fuzz target):
//   tri_fuzz_seeds binary OUT_DIR FILE.tri...   writes OUT_DIR/NAME.trib for each file that parses
//                                               (and skips the others: must-fail inputs)
//   tri_fuzz_seeds dict OUT_FILE                writes a libFuzzer dictionary for the text format
// The dictionary comes from the op table, so it never falls behind ops.def.
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "fuzz_common.h"
#include "ir/binary.h"
#include "ir/op_info.h"
#include "ir/types.h"

using namespace tri;
using namespace tri::ir;

namespace {

int write_dict(const char* path) {
  std::set<std::string> words = {"kernel", "func", "constexpr", "align", "divisible", "noalias", "ptr",
                                 "true", "false", "inf", "nan", "->", "^(", "%", "@", "//", " x ", "=",
                                 "[", "]", "{", "}", ":", ",", "0x", "\\\"", "\\n"};
  for (int s = 0; s < kNumScalars; ++s) words.insert(scalar_name(static_cast<Scalar>(s)));
  for (uint32_t i = 0; i < kNumOpcodes; ++i) {
    const OpInfo& info = op_info(static_cast<Opcode>(i));
    words.insert(info.name);
    for (const OperandSlot& slot : info.operands) words.insert(slot.name + "=");
    for (const AttrSpec& a : info.attrs) {
      words.insert(a.name + "=");
      for (const std::string& v : a.enum_values) words.insert(v);
    }
  }
  std::ofstream out(path);
  for (const std::string& w : words) {
    out << '"';
    for (char c : w) {
      if (c == '"' || c == '\\') out << '\\';
      out << c;
    }
    out << "\"\n";
  }
  return out ? 0 : 1;
}

int write_binaries(const std::string& dir, int argc, char** argv) {
#ifdef TRI_FUZZ_HAVE_TEXT
  int written = 0, skipped = 0;
  for (int i = 0; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    std::unique_ptr<Module> m;
    Status st = parse_text(ss.str(), argv[i], &m);
    if (!st.is_ok()) {
      ++skipped;  // a must-fail input: a text seed only
      continue;
    }
    std::string name = argv[i];
    name = name.substr(name.find_last_of('/') + 1);
    name = name.substr(0, name.rfind('.'));
    std::ofstream out(dir + "/" + name + ".trib", std::ios::binary);
    out << write_binary(*m);
    ++written;
  }
  std::printf("tri_fuzz_seeds: %d binary seeds in %s (%d inputs do not parse)\n", written, dir.c_str(), skipped);
  return 0;
#else
  (void)argc;
  (void)argv;
  std::printf("tri_fuzz_seeds: no text parser in this build; no binary seeds made in %s\n", dir.c_str());
  return 0;
#endif
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "dict" && argc == 3) return write_dict(argv[2]);
  if (mode == "binary" && argc >= 3) return write_binaries(argv[2], argc - 3, argv + 3);
  std::fprintf(stderr, "usage: tri_fuzz_seeds dict OUT_FILE | binary OUT_DIR FILE.tri...\n");
  return 2;
}
