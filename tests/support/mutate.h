// Byte-level mutations for the deterministic fuzz runs of the unit tests: overwrite, delete and
// duplicate a few spans of a seed, with a fixed random engine so that failures repeat.
#pragma once

#include <random>
#include <string>

namespace restack::test_support {

// `seed` with 1..max_edits edits; deleted and duplicated spans are 1..max_span bytes long.
inline std::string mutate(const std::string& seed, std::mt19937& random, int max_edits, size_t max_span) {
  std::string mutated = seed;
  const int edits = 1 + static_cast<int>(random() % static_cast<unsigned>(max_edits));
  for (int e = 0; e < edits && !mutated.empty(); ++e) {
    const size_t at = random() % mutated.size();
    switch (random() % 3) {
      case 0:
        mutated[at] = static_cast<char>(random());
        break;
      case 1:
        mutated.erase(at, 1 + random() % max_span);
        break;
      default:
        mutated.insert(at, mutated.substr(random() % mutated.size(), 1 + random() % (2 * max_span)));
    }
  }
  return mutated;
}

}  // namespace restack::test_support
