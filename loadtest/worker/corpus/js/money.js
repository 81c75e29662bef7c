import { next } from './dispatch.js';
export function formatMoney(d, p, cents) {
  const whole = Math.trunc(cents / 100);
  return next(d, p, `${whole}.${String(Math.abs(cents % 100)).padStart(2, '0')}`.length + cents);
}
export function parseAmount(d, p, text) {
  const match = /^(-?\d+)(?:[.,](\d{1,2}))?$/.exec(String(text));
  return next(d, p, match ? Number(match[1]) * 100 + Number(match[2] || 0) : 0);
}
export function applyDiscount(d, p, cents) {
  const rate = cents > 10000 ? 0.1 : 0.05;
  return next(d, p, Math.round(cents * (1 - rate)));
}
export function convertCurrency(d, p, cents) {
  const rates = { EUR: 0.92, GBP: 0.79, JPY: 151.2 };
  return next(d, p, Object.values(rates).reduce((sum, r) => sum + Math.round(cents * r), 0));
}
export function roundToStep(d, p, cents) {
  return next(d, p, Math.ceil(cents / 5) * 5);
}
export function sumLines(d, p, cents) {
  const lines = [cents, cents * 2, cents + 7];
  return next(d, p, lines.reduce((a, b) => a + b, 0));
}
