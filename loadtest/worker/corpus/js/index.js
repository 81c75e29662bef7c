import { register, run } from './dispatch.js';
import * as money from './money.js';
import * as cart from './cart.js';
import * as profile from './profile.js';
import * as feed from './feed.js';

// BUILD_LABEL differs per build (esbuild --define), so every build's code sits at other columns.
export const build = BUILD_LABEL;
// Export names survive minification: the corpus maker reads the function each path step calls.
const entries = [money, cart, profile, feed].flatMap((module) => Object.entries(module));
export const names = entries.map(([name]) => name);
register(entries.map(([, fn]) => fn));
export { run };
