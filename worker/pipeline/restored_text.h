// The "restored" text of a thread: each raw line printed again the way the platform's own tools
// print a symbolicated frame.
//   native  "main (in MDAP_testDemo9) (main.m:23)"          (atos; inlined callers follow)
//   java    "\tat com.example.Foo.bar(Foo.java:42)"         (ReTrace / R8 retrace, "<OR>" for
//                                                            ambiguous alternatives)
//   js      "    at render (src/App.jsx:12:7)"               (V8; Firefox lines keep fn@file:l:c)
// Frames that did not restore keep their raw line.
#pragma once

#include <string>
#include <vector>

#include "formats/stack/stack_line.h"
#include "worker/pipeline/restored_event.h"

namespace restack::pipeline {

// Appends the text lines for one raw line and the frames it restored to.
void appendRestoredLines(const stack::StackLine& line, const std::vector<const OutputFrame*>& frames,
                         std::vector<std::string>& out);

std::string formatJavaException(const stack::StackLine& line, const std::string& class_name,
                                const std::string& message);

}  // namespace restack::pipeline
