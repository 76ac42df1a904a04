/**
 * `npm run lint:deps` (.dependency-cruiser.cjs, src/README.md "Layers"): the check fails on a new import
 * circle, type-only imports included, and on an import from a lower layer to a higher one. Each case is
 * a tiny project in a temporary folder, shaped like src/ and checked with the project's own rules.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const depcruise = join(root, 'node_modules', '.bin', 'depcruise');

/** Runs the check on `files` (paths under src/, as in this repository); its exit code and report. */
async function check(files: Record<string, string>): Promise<{ code: number; report: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'palanque-layers-'));
  try {
    const compilerOptions = { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, verbatimModuleSyntax: true };
    await writeFile(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, include: ['src'] }));
    for (const [path, text] of Object.entries(files)) {
      await mkdir(dirname(join(dir, path)), { recursive: true });
      await writeFile(join(dir, path), text);
    }
    return await new Promise((resolve) => {
      execFile(depcruise, ['src', '--config', join(root, '.dependency-cruiser.cjs'), '--output-type', 'err'], { cwd: dir }, (error, stdout, stderr) => {
        resolve({ code: error ? Number(error.code ?? 1) : 0, report: `${stdout}${stderr}` });
      });
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('the dependency check (npm run lint:deps)', () => {
  it('passes a domain that imports the foundation, and an app that imports the domain', async () => {
    const result = await check({
      'src/http/errors.ts': 'export class ApiError extends Error {}\n',
      'src/accounts/users.ts': "import { ApiError } from '../http/errors.js';\nexport const refuse = () => new ApiError('no');\n",
      'src/app.ts': "import { refuse } from './accounts/users.js';\nexport const app = { refuse };\n",
    });
    expect(result.report).not.toMatch(/error/);
    expect(result.code).toBe(0);
  });

  it('fails on a circle closed by a type-only import', async () => {
    const result = await check({
      'src/accounts/models.ts': "import type { Settings } from './settings.js';\nexport interface Row { settings: Settings }\nexport const TABLE = 'users';\n",
      'src/accounts/settings.ts': "import { TABLE } from './models.js';\nexport interface Settings { table: typeof TABLE }\n",
    });
    expect(result.code).not.toBe(0);
    expect(result.report).toMatch(/no-circular/);
    expect(result.report).toMatch(/src\/accounts\/models\.ts/);
  });

  it('fails when a lower layer imports a higher one (the foundation a domain, a domain the configuration, the app a mode)', async () => {
    const result = await check({
      'src/accounts/users.ts': 'export const USERNAME = /^[a-z]+$/;\n',
      'src/http/auth.ts': "import type { USERNAME } from '../accounts/users.js';\nexport type Pattern = typeof USERNAME;\n",
      'src/config.ts': 'export const PORT = 8000;\n',
      'src/entities/index.ts': "import { PORT } from '../config.js';\nexport const port = PORT;\n",
      'src/sandbox/control.ts': 'export const reset = () => undefined;\n',
      'src/app.ts': "import { reset } from './sandbox/control.js';\nexport const app = { reset };\n",
    });
    expect(result.code).not.toBe(0);
    expect(result.report).toMatch(/foundation-above/);
    expect(result.report).toMatch(/domains-above/);
    expect(result.report).toMatch(/assembly-modes/);
  });
});
