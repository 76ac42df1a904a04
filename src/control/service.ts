/** The service's name and version, as the API root and the status report them (the version is package.json's). */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../project-root.js';

export const SERVICE_NAME = 'Palanque API';

export const SERVICE_VERSION: string = (JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { version: string }).version;
