// Function maps: which original function encloses an original position.
//
// A function map lists, per original source, the positions where the enclosing function
// changes, in source order. Everything from one entry up to the next belongs to the entry's
// function (so the outer function reappears right after an inner one ends). Metro writes them in
// "x_facebook_sources" as {"names": [...], "mappings": "..."}: entries are separated by ',' and
// groups of entries by ';'. Each entry is 2 or 3 VLQ fields (vlq.h): [column delta, name index
// delta, line delta (default 0)]. Line and name index carry over everywhere; the column carries
// over within a ';' group and restarts at 0 after each ';' (exactly what Metro's reader does).
// Lines are 1-based, columns 0-based. Worked example:
//   names ["<global>", "foo"], mappings "AAA,ICC,KD"
//     (1,0) "<global>"; (2,4) "foo" (I = +4 col, C = +1 name, C = +1 line); (2,9) "<global>" (K = +5, D = -1)
//   -> a position at line 2 column 6 is inside "foo"; line 2 column 9 and later is "<global>".
//
// When a map has no function map for a source, `inferFunctionMap` derives one from the
// source's text (sourcesContent) with a small JavaScript scanner; see function_scanner.h.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/common/status.h"

namespace restack::sourcemap {

// The name of code outside every function (a script's or module's top level, and a function a
// bundler wrote around a module's top-level code), as Metro's function maps spell it.
inline constexpr std::string_view kModuleCodeName = "<global>";
// The key of a method whose key the source computes from an expression (`['a' + 'b']() {}`):
// known only when the program runs, so the frame's printed name supplies it at lookup.
inline constexpr std::string_view kComputedKeyName = "<computed>";

struct FunctionMapEntry {
  uint32_t line = 1;    // 1-based original line where this function's region starts
  uint32_t column = 0;  // 0-based original column
  uint32_t name = 0;    // index into FunctionMap::names
};

struct FunctionMap {
  std::vector<std::string> names;
  std::vector<FunctionMapEntry> entries;  // sorted by (line, column)
  // Per name (empty: none is): the name is what V8's name inferrer gives an anonymous function
  // literal from the code around it ("scenarios" for an arrow in `const scenarios = [["a", () =>
  // f()]]`), not a name the function declares or is bound to. V8 prints it, so frames show it,
  // but it is a display name: the same text names unrelated callbacks, and it changes when code
  // after the function changes. Grouping keys such frames as it keys anonymous ones.
  std::vector<bool> inferred;

  // The function enclosing (line 1-based, column 0-based), or nullptr before the first entry.
  const std::string* enclosing(uint32_t line, uint32_t column) const;
  // Whether `name` (an element of `names`, as `enclosing` returns) is an inferred name.
  bool isInferred(const std::string* name) const {
    const std::less<const std::string*> before;
    if (inferred.empty() || before(name, names.data()) || !before(name, names.data() + inferred.size())) return false;
    return inferred[static_cast<size_t>(name - names.data())];
  }
  // Records whether `name` (just added to `names`) is inferred, keeping `inferred` empty while
  // no name is.
  void markInferred(const std::string& name, bool is_inferred) {
    if (!is_inferred && inferred.empty()) return;
    inferred.resize(names.size(), false);
    inferred[static_cast<size_t>(&name - names.data())] = is_inferred;
  }
};

// A Metro function-map name as V8 and Hermes print the function: "Shape#describe" ->
// "Shape.describe", "Shape#constructor" -> "Shape" (printed "new Shape"), "get__size" ->
// "get size", "Shape#set__size" -> "set size". Metro's other names ("<global>",
// "list.map$argument_0", "tools.decode") are kept.
std::string v8FunctionName(std::string_view metro_name);

// Decodes Metro's encoding. Fails on bad VLQ, name indexes outside `names`, positions < 0.
Expected<FunctionMap> decodeFunctionMap(const std::vector<std::string>& names, std::string_view mappings);

}  // namespace restack::sourcemap
