/** What a seed did, record by record, and that report as text for people (the CLI and `palanque db seed`). */

export type SeedKind =
  | 'user'
  | 'entity'
  | 'team member'
  | 'invitation'
  | 'guardianship link'
  | 'monitor'
  | 'metrics'
  | 'monitor alert rule'
  | 'scenario request'
  | 'sms credential'
  | 'sms campaign'
  | 'sms reply'
  | 'research bookmark'
  | 'news source'
  | 'court data';

export interface SeedEntry {
  kind: SeedKind;
  /** What the record is, for people: a username, a name, a title. */
  name: string;
  outcome: 'created' | 'existed' | 'skipped';
  /** Its id in this database. */
  id?: number;
  /** The id the fixture (and the spec's examples) gives it, when the record has another one here. */
  fixture_id?: number;
  note?: string;
}

export interface SeedReport {
  entries: SeedEntry[];
  /** The passwords of the users this run created: shown only here, stored only as hashes. */
  passwords: Array<{ username: string; password: string }>;
  /** What the run left out, and why. */
  notes: string[];
}

/** The report as lines of text: what was created, what existed, what was skipped, then the passwords. */
export function formatSeedReport(report: SeedReport): string {
  const lines: string[] = [];
  for (const outcome of ['created', 'existed', 'skipped'] as const) {
    const entries = report.entries.filter((entry) => entry.outcome === outcome);
    if (entries.length === 0) continue;
    lines.push(`${outcome === 'created' ? 'Created' : outcome === 'existed' ? 'Already there' : 'Skipped'} (${entries.length}):`);
    for (const entry of entries) {
      const id = entry.id === undefined ? '' : ` #${entry.id}`;
      const fixtureId = entry.fixture_id === undefined ? '' : ` (the fixture's id ${entry.fixture_id} was taken)`;
      lines.push(`  ${entry.kind}${id}: ${entry.name}${fixtureId}${entry.note ? ` - ${entry.note}` : ''}`);
    }
  }
  for (const note of report.notes) lines.push(`Note: ${note}`);
  return lines.join('\n');
}

/** The passwords of the users created, to print once. */
export function formatSeedPasswords(report: SeedReport): string {
  if (report.passwords.length === 0) return '';
  const width = Math.max(...report.passwords.map(({ username }) => username.length));
  return [
    'The demo users were created with these passwords, shown only this once (they are stored as hashes):',
    '',
    ...report.passwords.map(({ username, password }) => `    ${username.padEnd(width)}  ${password}`),
    '',
  ].join('\n');
}
