// Function names from source text: derives a function map (function_map.h) for an original
// source whose map carries no Metro function map, from its text (sourcesContent).
//
// Method: a small JavaScript tokenizer (comments, strings, template literals with nested ${},
// regular-expression literals told apart from division by the previous token) followed by a
// bracket walk. Each '{' is classified by the tokens before it:
//   function foo(…) {          -> "foo"
//   x = function (…) {  x: function (…) {  x = (…) => {  x = async a => {   -> "x"
//   a.b.c = function (…) {     -> "a.b.c"
//   A.prototype.m = function … -> "A.m" (V8 leaves "prototype" out of inferred names)
//   class K { m(…) { … } }     -> "K.m" (constructor -> "K"), as V8 names methods it prints
//   obj = { m(…) { … } }       -> "m"
//   get x() { … }  set x(v) { … }  -> "get x" / "set x" (in classes too, as V8 prints them)
//   foo((…) => {…}), [].map(function (…) {…})  -> "<anonymous>"
//   if/for/while/switch/catch (…) {, plain blocks, object literals -> not a function
// An arrow with an expression body (x => x.y) is a function up to the next ',' ';' or closing
// bracket at its own depth. Code outside every function is "<global>" (Metro's name).
// An anonymous literal ("[() => f()]", a callback that is not the last argument) is named as
// V8's name inferrer names it: by the next assignment, declaration or object-literal property
// that ends after it in the same parse, unless a call ends first while it is the last one
// waiting (docs/accuracy.md, "Function names against the original run").
// Each function start adds an entry with its name; each function end adds one with the
// enclosing function's name, giving the same shape as Metro's function maps.
//
// Positions: lines 1-based, columns 0-based in UTF-16 code units (as source maps and V8 count).
// TypeScript/Flow: return type annotations ("m(a: T): R {", "(a): R => {") and type parameters
// ("f<T>(") are skipped. Known limits: object-literal return types ("): { a: T } {"), getters
// named by computed keys, and ASI-terminated arrow expression bodies are named approximately;
// the scan never fails (unbalanced brackets are tolerated).
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "formats/sourcemap/function_map.h"

namespace restack::sourcemap {

// The original spelling of an identifier token of the scanned text (line 1-based, column 0-based
// in UTF-16 units, the token's text). Used to scan a minified file: the source map's `names`
// entry at that generated position gives the identifier the original source had there.
// An empty answer says the token has no counterpart in the original source (the map has a
// segment without a source there: code the minifier wrote); it is then spelled as written,
// except as the object of an assignment target, which it leaves out ("e.validateInternal =
// function" -> "validateInternal").
using TokenRenamer = std::function<std::string(uint32_t line, uint32_t column, std::string_view text)>;

// Without `rename`, names are spelled as in `source`. With it, every identifier that makes up a
// name goes through it: scanning a minified file then yields its function scopes (positions in
// the minified file) named as the original source names them. An anonymous function invoked
// where it is written ("function(n){…}(x)", a function a minifier inlined at its only call) is
// then named by rename(line, column, "(") at the invoking '(' (the callee the original called),
// its last dotted part; "(" back leaves it "<anonymous>", "" (a call the bundler wrote) names it
// "<global>", as is a declared function whose name the renamer says the bundler wrote: it holds
// a module's top-level code.
FunctionMap inferFunctionMap(std::string_view source, const TokenRenamer& rename = {});

}  // namespace restack::sourcemap
