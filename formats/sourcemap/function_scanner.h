// Function names from source text: derives a function map (function_map.h) for an original
// source whose map carries no Metro function map, from its text (sourcesContent).
//
// Method: a small JavaScript tokenizer (comments, strings, template literals with nested ${},
// regular-expression literals told apart from division by the previous token) followed by a
// bracket walk. Each '{' is classified by the tokens before it:
//   function foo(…) {          -> "foo"
//   x = function (…) {  x: function (…) {  x = (…) => {  x = async a => {   -> "x"
//   a.b.c = function (…) {     -> "a.b.c"
//   class K { m(…) { … } }     -> "K.m" (constructor -> "K"), as V8 names methods it prints
//   obj = { m(…) { … } }       -> "m"
//   foo((…) => {…}), [].map(function (…) {…})  -> "<anonymous>"
//   if/for/while/switch/catch (…) {, plain blocks, object literals -> not a function
// An arrow with an expression body (x => x.y) is a function up to the next ',' ';' or closing
// bracket at its own depth. Code outside every function is "<global>" (Metro's name).
// Each function start adds an entry with its name; each function end adds one with the
// enclosing function's name, giving the same shape as Metro's function maps.
//
// Positions: lines 1-based, columns 0-based in UTF-16 code units (as source maps and V8 count).
// Known limits: TypeScript/Flow type annotations between ')' and '{', getters named by computed
// keys, and ASI-terminated arrow expression bodies are named approximately; the scan never fails
// (unbalanced brackets are tolerated).
#pragma once

#include <string_view>

#include "formats/sourcemap/function_map.h"

namespace restack::sourcemap {

FunctionMap inferFunctionMap(std::string_view source);

}  // namespace restack::sourcemap
