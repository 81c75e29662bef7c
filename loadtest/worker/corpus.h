// The load test's symbol corpus: N builds of one app with symbol files of all five kinds, made by
// loadtest/worker/make_corpus.mjs (which says how each is built), and for each kind the raw frames
// it can generate with the restoration each must get.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "formats/common/status.h"

namespace restack::loadtest {

// A native instruction: function `function` (an index into the kind's function list) plus
// `offset`, and what llvm-symbolizer-19 --inlines says is there, innermost first.
struct NativeFrame {
  uint32_t function = 0;
  uint64_t offset = 0;
  std::vector<std::string> names;
};

// A Java frame of the base mapping (build 0's obfuscated names) and its restoration.
struct JavaFrame {
  std::string cls;     // obfuscated class (or a framework class kept as is)
  std::string method;  // obfuscated method
  int line = 0;
  std::string file;  // "SourceFile" for app classes
  std::vector<std::string> names;
};

// A JavaScript position captured by running a build's bundle, and its original function.
struct JsFrame {
  int line = 0;
  int column = 0;
  std::string minified;
  std::string expected;
};

struct CorpusUpload {
  std::string path;  // absolute
  std::string kind;  // restack.kind
  std::string name;  // restack.name (source maps)
};

struct CorpusBuild {
  std::string build_id;
  std::string android_build_id;          // GNU build id, hex
  std::vector<uint64_t> android_starts;  // per function of Corpus::android_functions
  std::string ios_uuid;
  std::vector<uint64_t> ios_starts;  // offsets from __TEXT
  std::string java_suffix;           // appended to every obfuscated name of the base mapping
  std::string web_url;
  std::vector<JsFrame> web_frames;
  std::string rn_name;
  std::vector<JsFrame> rn_frames;
  std::vector<CorpusUpload> uploads;
};

struct Corpus {
  std::string dir;
  std::string app;
  std::vector<std::string> android_functions, ios_functions;
  std::vector<NativeFrame> android_pool, ios_pool;
  std::vector<JavaFrame> java_pool;
  std::vector<CorpusBuild> builds;
};

// Makes (or grows) the corpus in `dir` to `builds` builds with make_corpus.mjs, then loads it.
Expected<Corpus> prepareCorpus(const std::string& dir, size_t builds);

// The default corpus folder: <repo>/.deps/loadtest/corpus.
std::string defaultCorpusDir();

// The obfuscated Java name of build `suffix`: ProGuard's short names (one or two lower-case
// letters) get the suffix, every other name stays (make_corpus.mjs renames the same way).
std::string renamedJava(const std::string& name, const std::string& suffix);
std::string renamedJavaClass(const std::string& qualified, const std::string& suffix);

}  // namespace restack::loadtest
