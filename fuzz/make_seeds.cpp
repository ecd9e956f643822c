// Prepares fuzzing inputs (run by fuzz/make_corpus.sh; not a fuzz target):
//   tri_fuzz_seeds binary OUT_DIR FILE.tri...   writes OUT_DIR/NAME.trib for each file that parses
//                                               (and skips the others: must-fail inputs)
//   tri_fuzz_seeds dict OUT_FILE                writes a libFuzzer dictionary for the text format
//   tri_fuzz_seeds cache OUT_DIR                writes fuzz_cache seeds: an entry, a shortcut and a
//                                               bundle (each prefixed by its reader's byte)
//   tri_fuzz_seeds package OUT_DIR              writes fuzz_package seeds: a package file and its
//                                               body (prefixed by 0 and 1, fuzz_package's modes)
// The dictionary comes from the op table, so it never falls behind ops.def.
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "cache/bundle.h"
#include "cache/entry.h"
#include "cache/shortcut.h"
#include "cache/store.h"
#include "package/package.h"
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

int write_cache_seeds(const std::string& dir) {
  cache::Entry e;
  cache::KeyBuilder kb;
  kb.add("seed", "entry");
  e.key = kb.finish();
  e.kind = "obj";
  e.metadata = cache::pack_fields({{"target", "cpu"}, {"kernel", "seed"}, {"tri", "fuzz"}});
  e.payload.assign(600, 'x');
  std::string bytes;
  if (!cache::encode_entry(e, nullptr, &bytes).is_ok()) return 1;
  auto put = [&](const std::string& name, char reader, const std::string& b) {
    std::ofstream(dir + "/" + name, std::ios::binary) << reader << b;
  };
  put("entry", 0, bytes);
  put("shortcut", 1, cache::encode_shortcut(cache::Key{0x1234, 0x5678}, e.key, "module bytes", nullptr));
  // A bundle of that entry, made by a cache in a scratch directory.
  const std::string scratch = dir + "/.scratch";
  {
    cache::DiskCache c(scratch, 0, nullptr);
    if (!c.insert(e)) return 1;
    uint32_t n = 0;
    if (!cache::export_bundle(c, scratch + "/b", nullptr, &n).is_ok()) return 1;
    std::ifstream in(scratch + "/b", std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    put("bundle", 2, ss.str());
  }
  return std::system(("rm -rf '" + scratch + "'").c_str()) == 0 ? 0 : 1;
}

int write_package_seeds(const std::string& dir) {
  package::Package p;
  p.producer = "tri fuzz";
  p.name = "seed.tri";
  package::Function f;
  f.name = "k";
  package::Param x;
  x.name = "x";
  x.type = "ptr<f32>";
  x.type_kind = 1;
  x.dtype = 7;
  f.params.push_back(x);
  p.functions.push_back(f);
  package::Kernel k;
  k.name = "k";
  k.target = "cpu";
  k.constexprs.push_back(package::Constexpr{"BLOCK", false, 128, 0, true});
  package::Variant v;
  v.payloads.push_back(package::Payload{"x86-64-v2", "so", "meta", std::string(300, 'c')});
  k.variants.push_back(v);
  p.kernels.push_back(k);
  std::string file;
  if (!package::write(p, &file).is_ok()) return 1;
  std::ofstream(dir + "/file", std::ios::binary) << '\0' << file;
  std::ofstream(dir + "/body", std::ios::binary) << '\1' << package::encode_body(p);
  return 0;
}

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "cache" && argc == 3) return write_cache_seeds(argv[2]);
  if (mode == "package" && argc == 3) return write_package_seeds(argv[2]);
  if (mode == "dict" && argc == 3) return write_dict(argv[2]);
  if (mode == "binary" && argc >= 3) return write_binaries(argv[2], argc - 3, argv + 3);
  std::fprintf(stderr, "usage: tri_fuzz_seeds dict OUT_FILE | binary OUT_DIR FILE.tri... | cache OUT_DIR | package OUT_DIR\n");
  return 2;
}
