// Synthetic R8-style mapping files and matching obfuscated traces for the ProGuard benchmarks.
// The shape follows real Android app mappings: many classes, ~20 methods each, about a third of
// the methods carrying inline chains of 2–3 frames, `sourceFile` entries on Kotlin classes.
// Output is plain ProGuard syntax so that ProGuard's ReTrace reads the same files.
#pragma once

#include <cstdint>
#include <string>

namespace restack::proguard::bench {

struct GeneratorOptions {
  // Classes in the mapping. Default 20000 (about 30 MB of mapping text).
  uint32_t classes = 20000;
  // Methods per class. Default 20.
  uint32_t methods_per_class = 20;
  // Seed of the pseudo-random choices. Default 1.
  uint32_t seed = 1;
};

std::string generateMapping(const GeneratorOptions& options);

// `frames` obfuscated frames spread over the mapping's classes (one in eight is an unobfuscated
// framework frame), under an exception header every 25 frames.
std::string generateTrace(const GeneratorOptions& options, uint32_t frames);

}  // namespace restack::proguard::bench
