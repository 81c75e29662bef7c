import { next } from './dispatch.js';
export function addItem(d, p, count) {
  const items = Array.from({ length: 3 }, (_, i) => ({ sku: `sku-${i}`, qty: count + i }));
  return next(d, p, items.length + count);
}
export function removeItem(d, p, count) {
  const items = new Map([['a', 1], ['b', 2]]);
  items.delete('a');
  return next(d, p, items.size + count);
}
export function updateQuantity(d, p, qty) {
  return next(d, p, Math.max(0, Math.min(99, qty + 1)));
}
export function cartTotal(d, p, total) {
  const taxed = total * 1.2;
  return next(d, p, Math.round(taxed));
}
export function validateCart(d, p, total) {
  if (total < 0) throw new RangeError('negative total');
  return next(d, p, total);
}
export function renderCartLine(d, p, total) {
  const html = `<li class="line">${total}</li>`;
  return next(d, p, html.length);
}
