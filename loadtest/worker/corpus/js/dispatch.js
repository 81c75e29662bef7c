// The call path of a load-test run: each step calls the function the path names next, so a
// captured stack visits every function of the bundle (loadtest/worker/make_corpus.mjs).
const table = [];
export function register(fns) {
  for (const fn of fns) table.push(fn);
}
export function next(depth, path, value) {
  if (depth === path.length) throw new TypeError(`cannot read properties of undefined (reading 'amount') at ${value}`);
  const step = table[path[depth]];
  return step(depth + 1, path, value) | 0;
}
export function run(path) {
  return next(0, path, 0);
}
