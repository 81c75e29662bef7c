#include "loadtest/worker/corpus.h"

#include <simdjson.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace restack::loadtest {
namespace {

std::string shellQuote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::vector<std::string> strings(simdjson::dom::array array) {
  std::vector<std::string> out;
  for (auto value : array) out.emplace_back(std::string_view(value.get_string().value_unsafe()));
  return out;
}

std::vector<uint64_t> numbers(simdjson::dom::array array) {
  std::vector<uint64_t> out;
  for (auto value : array) out.push_back(static_cast<uint64_t>(value.get_int64().value_unsafe()));
  return out;
}

std::vector<NativeFrame> nativePool(simdjson::dom::array array) {
  std::vector<NativeFrame> pool;
  for (auto entry : array) {
    NativeFrame frame;
    frame.function = static_cast<uint32_t>(entry["f"].get_int64().value_unsafe());
    frame.offset = static_cast<uint64_t>(entry["off"].get_int64().value_unsafe());
    frame.names = strings(entry["names"].get_array().value_unsafe());
    pool.push_back(std::move(frame));
  }
  return pool;
}

std::vector<JsFrame> jsFrames(simdjson::dom::array array) {
  std::vector<JsFrame> frames;
  for (auto entry : array) {
    auto fields = entry.get_array().value_unsafe();
    JsFrame frame;
    frame.line = static_cast<int>(fields.at(0).get_int64().value_unsafe());
    frame.column = static_cast<int>(fields.at(1).get_int64().value_unsafe());
    frame.minified = std::string(fields.at(2).get_string().value_unsafe());
    frame.expected = std::string(fields.at(3).get_string().value_unsafe());
    frames.push_back(std::move(frame));
  }
  return frames;
}

bool shortObfuscated(std::string_view name) {
  if (name.empty() || name.size() > 2) return false;
  for (char c : name) {
    if (c < 'a' || c > 'z') return false;
  }
  return true;
}

}  // namespace

std::string defaultCorpusDir() {
  return std::string(RESTACK_SOURCE_DIR) + "/.deps/loadtest/corpus";
}

std::string renamedJava(const std::string& name, const std::string& suffix) {
  return shortObfuscated(name) ? name + suffix : name;
}

std::string renamedJavaClass(const std::string& qualified, const std::string& suffix) {
  size_t dot = qualified.rfind('.');
  std::string_view last =
      dot == std::string::npos ? std::string_view(qualified) : std::string_view(qualified).substr(dot + 1);
  return shortObfuscated(last) ? qualified + suffix : qualified;
}

Expected<Corpus> prepareCorpus(const std::string& dir, size_t builds) {
  const std::string command = "node " +
                              shellQuote(std::string(RESTACK_SOURCE_DIR) + "/loadtest/worker/make_corpus.mjs") +
                              " --out " + shellQuote(dir) + " --builds " + std::to_string(builds) + " >&2";
  // One run at a time per folder, from making the corpus to reading its index: two runs that
  // share a corpus (ctest runs the tiny scenarios side by side) would otherwise write the same
  // files at once, and one read the other's half-written corpus.json.
  const std::string lock_path = dir + ".lock";
  std::error_code ignored;  // open() below says what failed
  std::filesystem::create_directories(std::filesystem::path(lock_path).parent_path(), ignored);
  struct Lock {
    int fd;
    ~Lock() {
      if (fd >= 0) ::close(fd);  // releases the lock
    }
  } lock{::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)};
  if (lock.fd < 0 || ::flock(lock.fd, LOCK_EX) != 0) {
    return Error(ErrorCode::kIo, "cannot lock " + lock_path + " to make the symbol corpus");
  }
  if (std::system(command.c_str()) != 0) {
    return Error(ErrorCode::kInternal,
                 "making the symbol corpus failed: " + command +
                     " (it needs clang-19, dsymutil-19, node and .deps/node from scripts/setup.sh)");
  }
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  const std::string file = dir + "/corpus.json";
  if (auto error = parser.load(file).get(root)) {
    return Error(ErrorCode::kMalformedInput, file + ": " + simdjson::error_message(error));
  }
  Corpus corpus;
  corpus.dir = dir;
  try {
    corpus.app = std::string(root["app"].get_string().value());
    corpus.android_functions = strings(root["android"]["functions"].get_array().value());
    corpus.android_pool = nativePool(root["android"]["pool"].get_array().value());
    corpus.ios_functions = strings(root["ios"]["functions"].get_array().value());
    corpus.ios_pool = nativePool(root["ios"]["pool"].get_array().value());
    for (auto entry : root["java"]["pool"].get_array().value()) {
      JavaFrame frame;
      frame.cls = std::string(entry["cls"].get_string().value());
      frame.method = std::string(entry["m"].get_string().value());
      frame.line = static_cast<int>(entry["line"].get_int64().value());
      std::string_view file_name = "SourceFile";
      (void)entry["file"].get_string().get(file_name);
      frame.file = std::string(file_name);
      frame.names = strings(entry["names"].get_array().value());
      corpus.java_pool.push_back(std::move(frame));
    }
    size_t index = 0;
    for (auto entry : root["builds"].get_array().value()) {
      if (index++ == builds) break;
      CorpusBuild build;
      build.build_id = std::string(entry["build_id"].get_string().value());
      build.android_build_id = std::string(entry["android"]["build_id"].get_string().value());
      build.android_starts = numbers(entry["android"]["starts"].get_array().value());
      build.ios_uuid = std::string(entry["ios"]["uuid"].get_string().value());
      build.ios_starts = numbers(entry["ios"]["starts"].get_array().value());
      build.java_suffix = std::string(entry["java"]["suffix"].get_string().value());
      build.web_url = std::string(entry["web"]["url"].get_string().value());
      build.web_frames = jsFrames(entry["web"]["frames"].get_array().value());
      build.rn_name = std::string(entry["rn"]["name"].get_string().value());
      build.rn_frames = jsFrames(entry["rn"]["frames"].get_array().value());
      for (auto upload : entry["uploads"].get_array().value()) {
        CorpusUpload u;
        u.path = dir + "/" + std::string(upload["file"].get_string().value());
        u.kind = std::string(upload["kind"].get_string().value());
        std::string_view name;
        if (!upload["name"].get_string().get(name)) u.name = std::string(name);
        build.uploads.push_back(std::move(u));
      }
      corpus.builds.push_back(std::move(build));
    }
  } catch (const simdjson::simdjson_error& error) {
    return Error(ErrorCode::kMalformedInput, file + ": " + error.what() + " (delete the folder to rebuild it)");
  }
  if (corpus.builds.size() < builds) {
    return Error(ErrorCode::kMalformedInput,
                 file + " holds " + std::to_string(corpus.builds.size()) + " builds, not " + std::to_string(builds));
  }
  return corpus;
}

}  // namespace restack::loadtest
