/** The project's root folder, found from this file whether it runs from src/ (tests) or dist/ (npm start). */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function findProjectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'spec', 'openapi.yaml'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('Cannot find spec/openapi.yaml above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
  return dir;
}

export const projectRoot = findProjectRoot();
export const specFile = join(projectRoot, 'spec', 'openapi.yaml');
