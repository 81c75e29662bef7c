import { next } from './dispatch.js';
export function rankStories(d, p, seed) {
  const scores = [seed % 7, seed % 3, seed % 5].sort((a, b) => b - a);
  return next(d, p, scores[0]);
}
export function similarity(d, p, seed) {
  const a = [1, 2, seed], b = [2, 1, seed];
  return next(d, p, a.reduce((s, x, i) => s + x * b[i], 0));
}
export function paginate(d, p, page) {
  const size = 20;
  return next(d, p, page * size);
}
export function decodeThumbnail(d, p, bytes) {
  const view = new Uint8Array(8).fill(bytes & 0xff);
  return next(d, p, view[3]);
}
export function bindThumbnails(d, p, count) {
  const bound = new Set([count, count + 1]);
  return next(d, p, bound.size);
}
export function trackImpression(d, p, id) {
  const event = JSON.stringify({ type: 'impression', id });
  return next(d, p, event.length);
}
