// tsc does not copy hand-written or generated `.d.ts` files to its output, so the build copies the
// contract's types (schema.d.ts, from `npm run generate`) beside the modules that import them.
import { copyFileSync } from 'node:fs';

copyFileSync(new URL('../schema.d.ts', import.meta.url), new URL('../dist/schema.d.ts', import.meta.url));
