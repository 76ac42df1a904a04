/**
 * The strategy projection: a pure function of stored data, so the same data always gives the same
 * answer. The formula is the contract's ("Social monitors and strategy scenarios" in the spec); each step
 * below is numbered as there. A projection that cannot be computed throws ProjectionError, whose message
 * is stored as the run's failure reason, for people to read.
 */
import type { components } from '../../sdk/schema.js';

export type ScenarioProjection = components['schemas']['ScenarioProjection'];

/** Days of metrics before `as_of` a run reads. */
export const WINDOW_DAYS = 30;
/** How much a tendency moves a share per day (0.1 percentage point). */
const TENDENCY_PER_DAY = 0.001;
const DAY_MS = 86_400_000;

export class ProjectionError extends Error {
  override name = 'ProjectionError';
}

export interface SnapshotInput {
  network: string;
  taken_at: string;
  followers: number;
  engagement: number;
  mentions: number;
}

export interface MarketshareInput {
  principal: boolean | null;
  marketshare: string;
  tendency: string | null;
}

export interface EntityInput {
  id: number;
  nome: string;
  /** Whether the entity has any social monitor. */
  monitored: boolean;
  /** The marketshare entries, in their order. */
  marketshare: MarketshareInput[];
  /** Snapshots of all its monitors in the window, oldest first. */
  snapshots: SnapshotInput[];
}

export interface ProjectionInput {
  horizonDays: number;
  /** The newest snapshot of any compared entity (step 1); undefined when there is none. */
  asOf: Date | undefined;
  entities: EntityInput[];
}

export function project({ horizonDays, asOf, entities }: ProjectionInput): ScenarioProjection {
  for (const entity of entities) {
    if (!entity.monitored) throw new ProjectionError(`${describe(entity)} has no social monitor.`);
  }
  if (!asOf) throw new ProjectionError('None of the compared entities has a metric snapshot.');
  const empty = entities.find((entity) => entity.snapshots.length === 0);
  if (empty) throw new ProjectionError(`${describe(empty)} has no metric snapshot in the ${WINDOW_DAYS} days up to ${asOf.toISOString()}.`);

  // Steps 2 and 3: voices and shares of voice now and at the start of the window.
  const voicesNow = entities.map((entity) => voice(entity.snapshots, 'newest'));
  const voicesStart = entities.map((entity) => voice(entity.snapshots, 'oldest'));
  if (sum(voicesNow) === 0) throw new ProjectionError('No compared entity has any voice (mentions or interactions) in the window.');
  const shares = sharesOf(voicesNow);
  const startShares = sum(voicesStart) === 0 ? shares : sharesOf(voicesStart);

  // Step 4: the trend per day over the span the snapshots cover.
  const oldest = Math.min(...entities.map((entity) => Date.parse(entity.snapshots[0]!.taken_at)));
  const spanDays = Math.max(1, (asOf.getTime() - oldest) / DAY_MS);

  const rows = entities.map((entity, index) => {
    const shareOfVoice = shares[index]!;
    const trend = (shareOfVoice - startShares[index]!) / spanDays;
    const entry = principalEntry(entity.marketshare);
    const marketshare = entry ? percentage(entity, entry.marketshare) : null; // step 5
    const tendency = entry ? direction(entity, entry.tendency) : 0;
    const current = marketshare === null ? shareOfVoice : (marketshare + shareOfVoice) / 2; // step 6
    const raw = Math.max(0, current + horizonDays * (trend / 2 + TENDENCY_PER_DAY * tendency)); // step 7
    return { entity, shareOfVoice, trend, marketshare, tendency, current, raw };
  });
  const totalRaw = sum(rows.map((row) => row.raw));
  if (totalRaw === 0) throw new ProjectionError(`Every projected share reaches 0 within ${horizonDays} days.`);

  return {
    as_of: asOf.toISOString(),
    window_days: WINDOW_DAYS,
    horizon_days: horizonDays,
    entities: rows.map((row) => ({
      entity_id: row.entity.id,
      nome: row.entity.nome,
      share_of_voice: round(row.shareOfVoice, 4),
      share_of_voice_trend: round(row.trend, 6),
      marketshare: row.marketshare === null ? null : round(row.marketshare, 4),
      tendency: row.tendency,
      current_share: round(row.current, 4),
      projected_share: round(row.raw / totalRaw, 4), // step 8
    })),
  };
}

/** Step 2: the sum over networks of mentions + engagement × followers, of each network's newest (or oldest) snapshot. */
function voice(snapshots: SnapshotInput[], which: 'newest' | 'oldest'): number {
  const chosen = new Map<string, SnapshotInput>();
  for (const snapshot of snapshots) {
    if (which === 'newest' || !chosen.has(snapshot.network)) chosen.set(snapshot.network, snapshot);
  }
  const networks = [...chosen.keys()].sort(); // a fixed order: floating-point sums depend on it
  return sum(networks.map((network) => chosen.get(network)!).map((snapshot) => snapshot.mentions + snapshot.engagement * snapshot.followers));
}

function sharesOf(voices: number[]): number[] {
  const total = sum(voices);
  return voices.map((value) => value / total);
}

function principalEntry(entries: MarketshareInput[]): MarketshareInput | undefined {
  return entries.find((entry) => entry.principal) ?? entries[0];
}

/** `23.5`, `23,5` and `23.5%` are 0.235. */
function percentage(entity: EntityInput, text: string): number {
  const normalised = text.trim().replace(/%$/, '').trim().replace(',', '.');
  const value = /^\d+(\.\d+)?$/.test(normalised) ? Number(normalised) : NaN;
  if (!(value >= 0 && value <= 100)) {
    throw new ProjectionError(`The marketshare "${text}" of ${describe(entity)} is not a number from 0 to 100.`);
  }
  return value / 100;
}

const DIRECTIONS: Record<string, -1 | 0 | 1> = { up: 1, alta: 1, down: -1, baixa: -1, stable: 0, estavel: 0, '': 0 };

function direction(entity: EntityInput, text: string | null): -1 | 0 | 1 {
  const word = (text ?? '').trim().toLowerCase().normalize('NFD').replace(/\p{Diacritic}/gu, '');
  const found = DIRECTIONS[word];
  if (found === undefined) {
    throw new ProjectionError(`The tendency "${text}" of ${describe(entity)} is not one of up, down or stable (alta, baixa, estável).`);
  }
  return found;
}

function describe(entity: EntityInput): string {
  return `Entity ${entity.id} (${entity.nome})`;
}

function sum(values: number[]): number {
  return values.reduce((total, value) => total + value, 0);
}

function round(value: number, places: number): number {
  const factor = 10 ** places;
  return Math.round(value * factor) / factor + 0; // + 0 turns -0 into 0
}
