// The ECMA-426 "scopes" field (the Scopes proposal, stage 3; encoding as in its current text and
// Chrome DevTools' source-map-scopes-codec 0.9): original scope trees and generated range trees,
// which say directly which original function each generated range belongs to.
//
// "scopes" is a comma-separated list of items; each starts with an unsigned VLQ tag:
//   A (0) empty: sources[n] has no scope tree
//   B (1) original scope start: uFLAGS (1 name, 2 kind, 4 stack frame) · uLINE · uCOLUMN ·
//         sNAME? · sKIND?   (names indexes)
//   C (2) original scope end:   uLINE · uCOLUMN
//   D (3) original scope variables: sVARIABLE+
//   E (4) generated range start: uFLAGS (1 has line, 2 has definition, 4 stack frame, 8 hidden) ·
//         uLINE? · uCOLUMN · sDEFINITION? (index into the original scope starts, in order)
//   F (5) generated range end:   uLINE? · uCOLUMN
//   G (6) bindings, H (7) sub-range bindings, I (8) call site, and unknown tags: skipped here
// Lines are relative to the previous line of the same tree kind; a column is relative when its
// line did not change, else absolute; NAME, KIND, DEFINITION are relative to their previous
// value. Unsigned VLQs have no sign bit.
//
// What Restack takes from it: for every generated range, the function it belongs to — its
// definition's name when that original scope is a stack frame (a function), else the enclosing
// range's — as a function map over generated positions (lines 1-based, columns 0-based), the
// same shape as a minified file scanned with function_scanner.h. Code outside every named range
// is "<global>". Worked example (tests/sourcemap/fixtures/scopes/scopes_app.min.js.map, names
// ["outer", "helper", "Global", "Function", "inner"]):
//   "BCAAE"  original scope start, flags 2 (kind), line 0, column 0, kind +2 -> "Global"
//   "BHAOAC" flags 7 (name, kind, stack frame), line 0, column 14, name 0 "outer", kind +1
//   …
//   "ECAA"   generated range start, flags 2 (definition), column 0, definition 0 (Global)
//   "EGKC"   flags 6 (definition, stack frame), column +10, definition +1 = 1 ("outer")
//   -> function map {(1,0) "<global>", (1,10) "outer", …}: generated line 1 from column 10 is in
//   outer.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "formats/common/status.h"
#include "formats/sourcemap/function_map.h"

namespace restack::sourcemap {

// Fails on bad VLQ digits, name or definition indexes out of range, and unbalanced start/end items.
Expected<FunctionMap> decodeScopesFunctionMap(std::string_view scopes, const std::vector<std::string>& names);

}  // namespace restack::sourcemap
