/** The project's root folder, found from this file whether it runs from src/ (tests) or dist/ (npm start, the image). */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function findProjectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  // dist/ has a copy of sdk/openapi.json (the SDK imports it), but no package.json.
  while (!(existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'sdk', 'openapi.json')))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('Cannot find package.json and sdk/openapi.json above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
  return dir;
}

export const projectRoot = findProjectRoot();
/** The contract's sources: the root document, whose `$ref`s name the files of spec/paths/ and spec/components/. */
export const specFile = join(projectRoot, 'spec', 'openapi.yaml');
/** The contract as one document, spec/ bundled by `npm run generate`: what the server validates against and serves. */
export const contractFile = join(projectRoot, 'sdk', 'openapi.json');
