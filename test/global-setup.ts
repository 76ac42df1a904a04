/**
 * Runs once before the test files: migrates a template database that test apps copy instead of
 * migrating their own (test/helpers/database.ts `createTestDatabase({ migrated: true })`). Twenty-six
 * migrations take half a second to a second per app, and a run starts hundreds of apps; a copy takes a
 * few milliseconds (a file copy on SQLite, CREATE DATABASE … TEMPLATE on PostgreSQL). The apps still run
 * `migrate`, which then finds nothing to apply. The template is dropped after the run.
 */
import type { TestProject } from 'vitest/node';
import { createMigratedTemplate, type DatabaseTemplate } from './helpers/database.js';

declare module 'vitest' {
  export interface ProvidedContext {
    migratedDatabaseTemplate: DatabaseTemplate;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const template = await createMigratedTemplate();
  project.provide('migratedDatabaseTemplate', template.descriptor);
  return () => template.drop();
}
