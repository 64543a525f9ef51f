// A Node builtin loaded on first use. In boot.cjs a static import becomes a require at
// load time, and node:crypto (streams behind it) and node:tty (net behind it) would cost
// every hand-over milliseconds it never uses.
import { createRequire } from 'node:module';

const load = createRequire(import.meta.url);

export const builtin = <T>(name: 'node:crypto' | 'node:tty' | 'node:v8'): T => load(name) as T;
