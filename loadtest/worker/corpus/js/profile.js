import { next } from './dispatch.js';
export function authHeader(d, p, token) {
  return next(d, p, `Bearer ${token}`.length);
}
export function loadProfile(d, p, id) {
  const cached = { id, name: 'user' + id };
  return next(d, p, cached.name.length);
}
export function mergeSettings(d, p, value) {
  const merged = Object.assign({ theme: 'dark' }, { lang: 'en', value });
  return next(d, p, Object.keys(merged).length + value);
}
export function normalizeEmail(d, p, value) {
  return next(d, p, `User${value}@Example.com`.trim().toLowerCase().length);
}
export function refreshToken(d, p, value) {
  const expires = Date.UTC(2024, 0, 1) + value;
  return next(d, p, expires % 1000);
}
export function renderAvatar(d, p, value) {
  const initials = ['Ada', 'Lovelace'].map((s) => s[0]).join('');
  return next(d, p, initials.length + value);
}
