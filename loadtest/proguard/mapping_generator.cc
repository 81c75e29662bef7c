#include "loadtest/proguard/mapping_generator.h"

#include <random>

namespace restack::proguard::bench {
namespace {

std::string obfuscatedClass(uint32_t index) {
  // a.b.c-style short names: two package levels and a base-26 class name.
  std::string name = "p" + std::to_string(index % 37) + ".";
  uint32_t n = index;
  do {
    name.push_back(static_cast<char>('a' + n % 26));
    n /= 26;
  } while (n > 0);
  return name;
}

std::string obfuscatedMethod(uint32_t index) {
  std::string name;
  uint32_t n = index;
  do {
    name.push_back(static_cast<char>('a' + n % 26));
    n /= 26;
  } while (n > 0);
  return name;
}

// Minified line where method `m` starts: every method owns a block of 10 lines.
uint32_t methodBase(uint32_t m) {
  return 1 + m * 10;
}

}  // namespace

std::string generateMapping(const GeneratorOptions& options) {
  std::mt19937 random(options.seed);
  std::string out = "# compiler: R8\n# compiler_version: 8.0.0\n# pg_map_id: 1bad5ee\n";
  out.reserve(static_cast<size_t>(options.classes) * options.methods_per_class * 90);
  for (uint32_t c = 0; c < options.classes; ++c) {
    const std::string original = "com.example.feature" + std::to_string(c % 211) + ".Component" + std::to_string(c);
    out += original + " -> " + obfuscatedClass(c) + ":\n";
    if (c % 3 == 0) out += "# {\"id\":\"sourceFile\",\"fileName\":\"Component" + std::to_string(c) + ".kt\"}\n";
    out += "    java.lang.String label -> a\n";
    for (uint32_t m = 0; m < options.methods_per_class; ++m) {
      const uint32_t base = methodBase(m);
      const uint32_t original_line = 20 + m * 17;
      const std::string name = "handleEvent" + std::to_string(m);
      const std::string obf = obfuscatedMethod(m);
      switch (random() % 3) {
        case 0: {  // inline chain at the first line, then the method's own range
          out += "    " + std::to_string(base) + ":" + std::to_string(base) + ":void com.example.util.Checks" +
                 std::to_string(c % 97) + ".require(boolean):" + std::to_string(40 + m) + ":" + std::to_string(40 + m) +
                 " -> " + obf + "\n";
          out += "    " + std::to_string(base) + ":" + std::to_string(base) + ":void " + name +
                 "(int):" + std::to_string(original_line) + " -> " + obf + "\n";
          out += "    " + std::to_string(base + 1) + ":" + std::to_string(base + 8) + ":void " + name +
                 "(int):" + std::to_string(original_line + 1) + ":" + std::to_string(original_line + 8) + " -> " + obf +
                 "\n";
          break;
        }
        default:
          out += "    " + std::to_string(base) + ":" + std::to_string(base + 8) + ":void " + name +
                 "(int):" + std::to_string(original_line) + ":" + std::to_string(original_line + 8) + " -> " + obf +
                 "\n";
          break;
      }
    }
  }
  return out;
}

std::string generateTrace(const GeneratorOptions& options, uint32_t frames) {
  std::mt19937 random(options.seed + 7);
  std::string out;
  for (uint32_t i = 0; i < frames; ++i) {
    if (i % 25 == 0) out += (i == 0 ? "" : "Caused by: ") + std::string("java.lang.IllegalStateException: boom\n");
    if (random() % 8 == 0) {
      out += "\tat android.os.Handler.dispatchMessage(Handler.java:106)\n";
      continue;
    }
    uint32_t c = random() % options.classes;
    uint32_t m = random() % options.methods_per_class;
    uint32_t line = methodBase(m) + random() % 9;
    out += "\tat " + obfuscatedClass(c) + "." + obfuscatedMethod(m) + "(SourceFile:" + std::to_string(line) + ")\n";
  }
  return out;
}

}  // namespace restack::proguard::bench
