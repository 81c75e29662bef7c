// The JavaScript side of the benchmark, on the same map and frames as sourcemap_bench:
//   node reference.js <map> <frames.txt> <node_modules> [restack-answers.txt]
// Prints, per library, time from "map never seen" (read + parse) to the first restored frame,
// and warm lookups per second on one core (wall clock and per CPU-second). Each timed lookup is
// originalPositionFor, which produces source, line, column and the segment's name. With Restack's
// answers (sourcemap_bench, SOURCEMAP_BENCH_ANSWERS), every frame's source, line and column are
// compared with trace-mapping's and the number of differences is printed.
"use strict";
const fs = require("fs");
const path = require("path");
const [mapPath, framesPath, nodeModules, restackAnswers] = process.argv.slice(2);
const frames = fs.readFileSync(framesPath, "utf8").trim().split("\n").map((line) => line.split(" ").map(Number));
const trace = require(path.join(nodeModules, "@jridgewell/trace-mapping"));
const { SourceMapConsumer } = require(path.join(nodeModules, "source-map"));
const Symbolication = require(path.join(nodeModules, "metro-symbolicate/src/Symbolication"));
const MetroConsumer = require(path.join(nodeModules, "metro-symbolicate/node_modules/source-map")).SourceMapConsumer;

function ms(start) {
  return Number(process.hrtime.bigint() - start) / 1e6;
}

async function main() {
  const results = {};
  let start = process.hrtime.bigint();
  let map = new trace.TraceMap(fs.readFileSync(mapPath, "utf8"));
  trace.originalPositionFor(map, { line: frames[0][0], column: frames[0][1] - 1 });
  results["trace-mapping first frame ms"] = ms(start);
  // Warm: every frame decoded once, then timed rounds.
  for (const [line, column] of frames) trace.originalPositionFor(map, { line, column: column - 1 });
  const rounds = 5;
  start = process.hrtime.bigint();
  const cpuStart = process.cpuUsage();
  let sink = 0;  // keeps the answers used, so that no lookup can be optimized away
  for (let r = 0; r < rounds; ++r) {
    for (const [line, column] of frames) {
      const found = trace.originalPositionFor(map, { line, column: column - 1 });
      if (found.source !== null) sink += found.line;
    }
  }
  const cpu = process.cpuUsage(cpuStart);
  if (sink === 0) console.error("no frame restored");
  results["trace-mapping warm lookups/s"] = Math.round((rounds * frames.length) / (ms(start) / 1000));
  // CPU time of the whole node process (all its threads, GC included) over the same rounds: the
  // figure to set against Restack's CPU-time rate when the machine is shared.
  results["trace-mapping warm lookups per CPU-second"] = Math.round(
    (rounds * frames.length) / ((cpu.user + cpu.system) / 1e6));

  if (restackAnswers) {
    const theirs = fs.readFileSync(restackAnswers, "utf8").trim().split("\n");
    let differ = 0;
    frames.forEach(([line, column], i) => {
      const found = trace.originalPositionFor(map, { line, column: column - 1 });
      const ours = `${found.source} ${found.line} ${found.column + 1}`;
      if (ours !== theirs[i] && differ++ < 5) console.error(`frame ${line}:${column}: trace-mapping ${ours}, Restack ${theirs[i]}`);
    });
    if (theirs.length !== frames.length) differ += Math.abs(theirs.length - frames.length);
    results["answers differing from Restack's (source, line, column)"] = differ;
  }

  start = process.hrtime.bigint();
  await SourceMapConsumer.with(fs.readFileSync(mapPath, "utf8"), null, (consumer) => {
    consumer.originalPositionFor({ line: frames[0][0], column: frames[0][1] - 1 });
    results["source-map first frame ms"] = ms(start);
  });

  start = process.hrtime.bigint();
  const context = Symbolication.createContext(MetroConsumer, fs.readFileSync(mapPath, "utf8"));
  context.getOriginalPositionDetailsFor(frames[0][0], frames[0][1] - 1);
  results["metro-symbolicate first frame ms"] = ms(start);
  console.log(JSON.stringify(results, null, 1));
}
main();
