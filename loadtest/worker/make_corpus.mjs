// Builds the load test's symbol corpus: N builds of one app, each with its own symbol files of
// all five kinds, and for each kind a pool of raw frames with the restoration they must get.
//
//   node loadtest/worker/make_corpus.mjs --out .deps/loadtest/corpus --builds 50
//
// Incremental: builds already in the folder are kept, so growing 50 -> 1000 only makes the rest.
// Needs what scripts/setup.sh installs (clang-19, ld.lld-19, ld64.lld-19, dsymutil-19,
// llvm-nm-19, llvm-symbolizer-19, node, esbuild under .deps/node).
//
// What a build is, per kind:
//   Android native  loadtest/worker/corpus/native/codec.c, compiled once (aarch64, -O2 -g) and
//                   linked per build with its own GNU build id and its own function order
//                   (--symbol-ordering-file), so every function sits at another address.
//   iOS             the same C for arm64 Mach-O, linked per build as a dylib with its own order and
//                   a per-build label object (lld's UUID is a content hash: every build gets its
//                   own), then dsymutil-19; the dSYM's DWARF file is the upload.
//   Android Java    the demo's real ProGuard 7.7 mapping (worker/demo/samples/android/mapping.txt);
//                   build k renames every obfuscated class and method name consistently (`a` ->
//                   `a<k>`), as a build with another -obfuscationdictionary would. Build 0 is the
//                   mapping itself. (Real ProGuard runs per build take seconds each.)
//   Web             loadtest/worker/corpus/js bundled and minified by esbuild with a per-build
//                   label (code at other columns), named main.<hash>.js; the stack is captured by
//                   running the bundle in node under its CDN URL.
//   React Native    the same sources bundled as index.android.bundle with another label; the
//                   captured V8 positions are written as JavaScriptCore frames (fn@bundle:L:C).
//
// Expected restorations come from the real tools, never from Restack: llvm-symbolizer-19
// --inlines on build 0's binaries (the code of a function is the same bytes in every build, only
// its start moves, so an offset inside a function restores the same in all of them), the
// mapping's own lines for Java, and the call path a captured JavaScript stack walked.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import { createRequire } from 'node:module';

const repo = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const args = Object.fromEntries(
  process.argv.slice(2).reduce((pairs, arg, i, all) => (arg.startsWith('--') ? [...pairs, [arg.slice(2), all[i + 1]]] : pairs), []),
);
const out = path.resolve(args.out || path.join(repo, '.deps/loadtest/corpus'));
const builds = Number(args.builds || 50);
const app = 'loadtest';
const corpusVersion = 3;
const nodeRequire = createRequire(path.join(repo, '.deps/node/node_modules/'));
const esbuild = nodeRequire('esbuild');
const { SourceMapConsumer } = nodeRequire('source-map');

const run = (tool, argv, options = {}) => execFileSync(tool, argv, { encoding: 'utf8', maxBuffer: 1 << 28, ...options });
const hex = (text, bytes) => createHash('sha256').update(text).digest('hex').slice(0, bytes * 2);
fs.mkdirSync(path.join(out, 'base'), { recursive: true });

// A permutation of `items` seeded by `seed` (xorshift), so a build's function order is reproducible.
function shuffled(items, seed) {
  const result = [...items];
  let state = (seed * 2654435761 + 12345) >>> 0 || 1;
  for (let i = result.length - 1; i > 0; --i) {
    state ^= state << 13, state >>>= 0, state ^= state >>> 17, state ^= state << 5, state >>>= 0;
    const j = state % (i + 1);
    [result[i], result[j]] = [result[j], result[i]];
  }
  return result;
}

// ---- native: compile once -------------------------------------------------------------------
const source = path.join(repo, 'loadtest/worker/corpus/native/codec.c');
const androidObject = path.join(out, 'base/codec-android.o');
const iosObject = path.join(out, 'base/codec-ios.o');
run('clang-19', ['--target=aarch64-linux-android24', '-g', '-O2', '-fPIC', '-ffreestanding', '-nostdlibinc',
  '-ffunction-sections', '-fdebug-prefix-map=' + path.dirname(source) + '=/home/dev/app/src/main/cpp', '-c', source, '-o', androidObject]);
run('clang-19', ['--target=arm64-apple-ios14', '-g', '-O2', '-ffreestanding', '-nostdlibinc',
  '-fdebug-prefix-map=' + path.dirname(source) + '=/Users/dev/CodecKit', '-c', source, '-o', iosObject]);

// Defined functions of a linked binary: name -> [start, end).
function functionsOf(binary, macho) {
  const symbols = run('llvm-nm-19', ['--defined-only', '-n', binary], { stdio: ['ignore', 'pipe', 'ignore'] })
    .split('\n').map((line) => line.trim().split(/\s+/)).filter((f) => f.length === 3 && (f[1] === 'T' || f[1] === 't'));
  const text = run('llvm-objdump-19', ['-h', binary]).split('\n').map((l) => l.trim().split(/\s+/)).find((f) => f[1] === '.text' || f[1] === '__text');
  const textEnd = parseInt(text[3], 16) + parseInt(text[2], 16);
  const result = new Map();
  symbols.forEach((f, i) => {
    const name = macho ? f[2].replace(/^_/, '') : f[2];
    const start = parseInt(f[0], 16);
    const end = i + 1 < symbols.length ? parseInt(symbols[i + 1][0], 16) : textEnd;
    if (!name.startsWith('$') && end > start) result.set(name, [start, end]);
  });
  return result;
}

function linkAndroid(dir, k, names) {
  const order = path.join(dir, 'order.txt');
  fs.writeFileSync(order, shuffled(names, k * 2 + 1).join('\n') + '\n');
  const buildId = hex(`android-${k}`, 20);
  const lib = path.join(dir, 'libcodec.so');
  run('clang-19', ['--target=aarch64-linux-android24', '-shared', '-nostdlib', '-fuse-ld=lld', `-Wl,--build-id=0x${buildId}`,
    '-Wl,-soname,libcodec.so', `-Wl,--symbol-ordering-file=${order}`, '-Wl,--no-warn-symbol-ordering', androidObject, '-o', lib]);
  return { buildId, lib };
}

function linkIos(dir, k, names) {
  const order = path.join(dir, 'order-ios.txt');
  fs.writeFileSync(order, shuffled(names, k * 2 + 2).map((n) => '_' + n).join('\n') + '\n');
  const label = path.join(dir, 'label.c');
  fs.writeFileSync(label, `const char codec_build_label[] = "${app} build ${k}";\n`);
  run('clang-19', ['--target=arm64-apple-ios14', '-g', '-O2', '-c', label, '-o', path.join(dir, 'label.o')]);
  const dylib = path.join(dir, 'CodecKit');
  run('clang-19', ['--target=arm64-apple-ios14', '-fuse-ld=lld', '-nostdlib', '-dynamiclib', '-Wl,-undefined,dynamic_lookup',
    `-Wl,-order_file,${order}`, '-Wl,-install_name,@rpath/CodecKit.framework/CodecKit', iosObject, path.join(dir, 'label.o'), '-o', dylib]);
  run('dsymutil-19', [dylib, '-o', path.join(dir, 'CodecKit.dSYM')]);
  const dwarf = path.join(dir, 'CodecKit.dSYM/Contents/Resources/DWARF/CodecKit');
  const uuid = run('llvm-dwarfdump-19', ['--uuid', dwarf]).split(/\s+/)[1].toLowerCase();
  return { uuid, dwarf };
}

// Frames of build 0: every instruction of every function, restored by llvm-symbolizer-19.
function nativePool(binary, functions) {
  const names = [...functions.keys()];
  const addresses = [];
  for (const [fi, name] of names.entries()) {
    const [start, end] = functions.get(name);
    for (let at = start; at + 4 <= end; at += 4) addresses.push([fi, at - start, at]);
  }
  const answers = JSON.parse(run('llvm-symbolizer-19', ['--inlines', '--output-style=JSON', `--obj=${binary}`,
    ...addresses.map(([, , at]) => '0x' + at.toString(16))]));
  const pool = [];
  answers.forEach((answer, i) => {
    const frames = answer.Symbol.map((s) => s.FunctionName);
    if (frames.length && frames.every((n) => n && n !== '??')) pool.push({ f: addresses[i][0], off: addresses[i][1], names: frames });
  });
  return { functions: names, pool };
}

// ---- Java: the demo's real mapping, renamed per build --------------------------------------
const baseMapping = fs.readFileSync(path.join(repo, 'worker/demo/samples/android/mapping.txt'), 'utf8');
const obfuscated = (name) => /^[a-z]{1,2}$/.test(name);
function renameClass(name, k) {
  const dot = name.lastIndexOf('.');
  return k === 0 || !obfuscated(name.slice(dot + 1)) ? name : name + k;
}
function renameMember(name, k) {
  return k === 0 || !obfuscated(name) ? name : name + k;
}
function mappingFor(k) {
  return baseMapping.split('\n').map((line) => {
    let m = /^(\S.*) -> (\S+):$/.exec(line);
    if (m) return `${m[1]} -> ${renameClass(m[2], k)}:`;
    m = /^(\s+.*) -> (\S+)$/.exec(line);
    if (m) return `${m[1]} -> ${renameMember(m[2], k)}`;
    return line;
  }).join('\n');
}
// Frames whose restoration the mapping decides alone: one inline chain covers the line.
function javaPool() {
  const pool = [];
  let cls = null;
  const chains = new Map();  // "obfClass.obfMethod" -> [{from, to, names}]
  for (const line of baseMapping.split('\n')) {
    let m = /^(\S+) -> (\S+):$/.exec(line);
    if (m) { cls = { original: m[1], obf: m[2] }; continue; }
    m = /^\s+(\d+):(\d+):\S+ ([^\s(]+)\(.*\)(?::\d+(?::\d+)?)? -> (\S+)$/.exec(line);
    if (!m || !cls) continue;
    const [, from, to, method, obf] = m;
    // ProGuard's optimizer appends "$<hex>" to a method whose descriptor it changed; the source
    // name is without it, and that is what the unobfuscated app printed
    // (formats/proguard/mapping_reader.h).
    const source = method.replace(/\$[0-9a-f]{6,8}$/, '');
    const name = source.includes('.') ? source : `${cls.original}.${source}`;
    const key = `${cls.obf}.${obf}`;
    const list = chains.get(key) || chains.set(key, []).get(key);
    // A chain is an inlined body's line followed by its callers' lines (one original line
    // each, the call site) on the same obfuscated range, innermost first.
    const last = list[list.length - 1];
    const caller = /\):\d+ -> /.test(line);
    if (last && last.from === +from && last.to === +to && caller) last.names.push(name);
    else list.push({ from: +from, to: +to, names: [name], cls: cls.obf, obf });
  }
  for (const list of chains.values()) {
    for (const chain of list) {
      for (const lineNo of new Set([chain.from, chain.to])) {
        const covering = list.filter((c) => c.from <= lineNo && lineNo <= c.to);
        if (covering.length === 1) pool.push({ cls: chain.cls, m: chain.obf, line: lineNo, names: chain.names });
      }
    }
  }
  // Framework frames pass through as they are (not in the mapping).
  for (const [cls, m, file, lineNo] of [['android.os.Handler', 'handleCallback', 'Handler.java', 938],
    ['android.os.Handler', 'dispatchMessage', 'Handler.java', 99], ['android.os.Looper', 'loop', 'Looper.java', 223],
    ['android.app.ActivityThread', 'main', 'ActivityThread.java', 7656], ['android.view.View', 'performClick', 'View.java', 7448]]) {
    pool.push({ cls, m, line: lineNo, file, names: [`${cls}.${m}`] });
  }
  return pool;
}

// ---- JavaScript: bundle, run, capture --------------------------------------------------------
function bundle(label, outfile) {
  esbuild.buildSync({
    entryPoints: [path.join(repo, 'loadtest/worker/corpus/js/index.js')], bundle: true, minify: true, sourcemap: true,
    format: 'iife', globalName: 'LoadApp', define: { BUILD_LABEL: JSON.stringify(label) }, outfile, logLevel: 'error',
  });
}
// The named function around each line of the JavaScript sources: file name -> [[first, last, name]].
const jsDir = path.join(repo, 'loadtest/worker/corpus/js');
const jsFunctions = new Map(fs.readdirSync(jsDir).map((file) => {
  const ranges = [];
  fs.readFileSync(path.join(jsDir, file), 'utf8').split('\n').forEach((text, i) => {
    const m = /^export function (\w+)\(/.exec(text);
    if (m) ranges.push([i + 1, i + 1, m[1]]);
    else if (text === '}' && ranges.length) ranges[ranges.length - 1][1] = i + 1;
  });
  return [file, ranges];
}));
// Runs the bundle under `url` along a path through every function; returns the captured frames
// as [line, column, minified name, expected original name]. Each frame is cross-checked with the
// reference library (source-map's originalPositionFor, then the function around that source line)
// and kept only when both agree; the count kept is recorded, and all agree on this corpus.
async function capture(code, map, url) {
  const sandbox = { Error, TypeError, RangeError };
  vm.createContext(sandbox);
  vm.runInContext('Error.stackTraceLimit = 1000;', sandbox);
  // The bundle alone on its lines: its positions must be the ones its map describes.
  vm.runInContext(code + '\nthis.LoadApp = LoadApp;', sandbox, { filename: url });
  const { names, run: runPath } = sandbox.LoadApp;
  const order = [...names.keys()];
  let stack = '';
  try { runPath(order); } catch (e) { stack = e.stack; }
  // Innermost first: next (throw), then per step from the last: the function, next (its call).
  const expected = ['next'];
  for (let i = order.length - 1; i >= 0; --i) expected.push(names[order[i]], 'next');
  expected.push('run');
  const frames = [];
  for (const line of stack.split('\n')) {
    const m = /^\s+at (?:(\S+) )?\(?(.*):(\d+):(\d+)\)?$/.exec(line);
    if (m && m[2] === url) frames.push([+m[3], +m[4], m[1] || '', expected[frames.length]]);
  }
  if (frames.length !== expected.length) throw new Error(`captured ${frames.length} frames, expected ${expected.length}`);
  const unique = [...new Map(frames.map((f) => [`${f[0]}:${f[1]}`, f])).values()];
  const consumer = await new SourceMapConsumer(JSON.parse(map));
  const agreed = unique.filter(([line, column, , expectedName]) => {
    const original = consumer.originalPositionFor({ line, column: column - 1 });
    const ranges = original.source ? jsFunctions.get(path.basename(original.source)) || [] : [];
    const around = ranges.find(([first, last]) => first <= original.line && original.line <= last);
    return around && around[2] === expectedName;
  });
  consumer.destroy();
  return { frames: agreed, captured: unique.length };
}

// ---- the builds ---------------------------------------------------------------------------------
const corpusFile = path.join(out, 'corpus.json');
let corpus = fs.existsSync(corpusFile) ? JSON.parse(fs.readFileSync(corpusFile, 'utf8')) : null;
if (!corpus || corpus.version !== corpusVersion || !fs.existsSync(path.join(out, 'builds/0'))) {
  corpus = { version: corpusVersion, app, builds: [] };
}
const started = Date.now();
for (let k = corpus.builds.length; k < builds; ++k) {
  const dir = path.join(out, 'builds', String(k));
  fs.mkdirSync(dir, { recursive: true });
  const build = { build_id: `2.0.${k}(${2000 + k})`, uploads: [] };
  const androidNames = k === 0 ? [...functionsOf(androidObject, false).keys()] : corpus.android.functions;
  const android = linkAndroid(dir, k, androidNames);
  const androidFunctions = functionsOf(android.lib, false);
  const ios = linkIos(dir, k, k === 0 ? [...functionsOf(iosObject, true).keys()] : corpus.ios.functions);
  const iosFunctions = functionsOf(path.join(dir, 'CodecKit'), true);
  if (k === 0) {
    corpus.android = nativePool(android.lib, androidFunctions);
    corpus.ios = nativePool(ios.dwarf, iosFunctions);
    corpus.java = { pool: javaPool() };
  }
  build.android = { build_id: android.buildId, starts: corpus.android.functions.map((n) => androidFunctions.get(n)[0]) };
  build.ios = { uuid: ios.uuid, starts: corpus.ios.functions.map((n) => iosFunctions.get(n)[0]) };
  build.java = { suffix: k === 0 ? '' : String(k) };
  fs.writeFileSync(path.join(dir, 'mapping.txt'), mappingFor(k));
  bundle(`web build ${k}`, path.join(dir, 'web.js'));
  const webCode = fs.readFileSync(path.join(dir, 'web.js'), 'utf8');
  const webName = `main.${hex(webCode, 4)}.js`;
  const webUrl = `https://cdn.example.com/static/js/${webName}`;
  const web = await capture(webCode, fs.readFileSync(path.join(dir, 'web.js.map'), 'utf8'), webUrl);
  build.web = { name: webName, url: webUrl, frames: web.frames, captured: web.captured };
  bundle(`react native build ${k}`, path.join(dir, 'rn.js'));
  const rn = await capture(fs.readFileSync(path.join(dir, 'rn.js'), 'utf8'), fs.readFileSync(path.join(dir, 'rn.js.map'), 'utf8'),
    'index.android.bundle');
  build.rn = { name: 'index.android.bundle', frames: rn.frames, captured: rn.captured };
  build.uploads = [
    { file: `builds/${k}/libcodec.so`, kind: 'elf' },
    { file: `builds/${k}/CodecKit.dSYM/Contents/Resources/DWARF/CodecKit`, kind: 'dsym' },
    { file: `builds/${k}/mapping.txt`, kind: 'proguard' },
    { file: `builds/${k}/web.js.map`, kind: 'sourcemap', name: webName },
    { file: `builds/${k}/rn.js.map`, kind: 'sourcemap', name: 'index.android.bundle' },
  ];
  for (const f of ['label.c', 'label.o', 'order.txt', 'order-ios.txt', 'web.js', 'rn.js']) fs.rmSync(path.join(dir, f), { force: true });
  corpus.builds.push(build);
  if ((k + 1) % 25 === 0 || k + 1 === builds) {
    fs.writeFileSync(corpusFile, JSON.stringify(corpus));
    process.stderr.write(`corpus: ${k + 1}/${builds} builds (${((Date.now() - started) / 1000).toFixed(1)} s)\n`);
  }
}
fs.writeFileSync(corpusFile, JSON.stringify(corpus));
console.log(`corpus ready: ${out} (${corpus.builds.length} builds, ${corpus.android.pool.length} native frames, ` +
  `${corpus.ios.pool.length} iOS frames, ${corpus.java.pool.length} Java frames, web ${corpus.builds[0].web.frames.length} ` +
  `of ${corpus.builds[0].web.captured} captured positions kept)`);
