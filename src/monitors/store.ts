/**
 * Social monitors: what a monitor watches (profiles and keywords) and the metric snapshots it keeps. A
 * snapshot is identified by its monitor, network and moment, so importing the same data twice changes
 * nothing and corrected values replace the stored ones. Callers check team access before coming here,
 * except for `viewsIn`, which keeps to the monitors its viewer may read.
 */
import { Op, QueryTypes, UniqueConstraintError, type Transaction } from 'sequelize';
import type { components } from '../../sdk/schema.js';
import { addDays, brasiliaDay, brasiliaDaysBetween, brasiliaMidnight } from '../brasilia-time.js';
import { withLockedTransaction } from '../db/locks.js';
import { asIsoTimestamp, asNumber, readerOf } from '../db/reader.js';
import type { TeamRole } from '../entities/models.js';
import type { MonitorModels, MonitorRow, ProfileRow, SnapshotRow } from './models.js';

export type SocialMonitor = components['schemas']['SocialMonitor'];
export type MonitoredProfile = components['schemas']['MonitoredProfile'];
export type MetricSnapshot = components['schemas']['MetricSnapshot'];
type DailyMetric = components['schemas']['DailyMetric'];

/** How many days the daily series covers, today (in Brasília) included. */
export const SERIES_DAYS = 30;

export interface NewMonitor {
  entityId: number;
  name: string;
  keywords: string[];
  profiles: MonitoredProfile[];
  createdBy: number;
}

export interface RecordedSnapshots {
  created: number;
  replaced: number;
  unchanged: number;
  /** Kept out: the snapshot stored at that moment came from a later change. */
  outdated: number;
}

/** A snapshot with, when it has one (a webhook's), the time of the change that reported it: see `record`. */
export interface TimedSnapshot extends MetricSnapshot {
  changed_at?: string;
}

/** A snapshot as stored, with its counters as numbers. */
export interface StoredSnapshot extends MetricSnapshot {
  monitor_id: number;
}

export class MonitorStore {
  private readonly recordedListeners: Array<(monitorId: number) => Promise<void>> = [];

  constructor(private readonly models: MonitorModels) {}

  /** Calls `listener` with the monitor's id once snapshots recorded for it changed something (its alert rules are checked). */
  onRecorded(listener: (monitorId: number) => Promise<void>): void {
    this.recordedListeners.push(listener);
  }

  /** Creates the monitor; `name_taken` when the entity already has one with this name (ignoring case). */
  /**
   * Creates a monitor with its profiles and keywords; `name_taken` when its entity has one of that name.
   * `recordCreation` runs in the creation's transaction (the entity's edit history), so both commit together.
   */
  async create(monitor: NewMonitor, now = new Date(), recordCreation?: (row: MonitorRow, transaction: Transaction) => Promise<void>): Promise<MonitorRow | 'name_taken'> {
    try {
      return await this.models.Monitor.sequelize!.transaction(async (transaction) => {
        const row = await this.models.Monitor.create(
          { entity_id: monitor.entityId, name: monitor.name, name_key: monitor.name.toLowerCase(), created_by: monitor.createdBy, created_at: now },
          { transaction },
        );
        const monitorId = Number(row.get('id'));
        await this.models.Profile.bulkCreate(
          monitor.profiles.map((profile, position) => ({ monitor_id: monitorId, position, nm_rede: profile.nm_rede, username: profile.username ?? null, link: profile.link ?? null })),
          { transaction },
        );
        await this.models.Keyword.bulkCreate(
          monitor.keywords.map((keyword, position) => ({ monitor_id: monitorId, position, keyword })),
          { transaction },
        );
        const created = row.get({ plain: true });
        await recordCreation?.(created, transaction);
        return created;
      });
    } catch (error) {
      if (error instanceof UniqueConstraintError) return 'name_taken';
      throw error;
    }
  }

  async byId(id: number): Promise<MonitorRow | undefined> {
    return ((await this.models.Monitor.findByPk(id, { raw: true })) as MonitorRow | null) ?? undefined;
  }

  /** The monitors of these entities (of every entity when undefined), by id. */
  async ofEntities(entityIds: number[] | undefined): Promise<MonitorRow[]> {
    const where = entityIds === undefined ? {} : { entity_id: { [Op.in]: entityIds } };
    return (await this.models.Monitor.findAll({ where, order: [['id', 'ASC']], raw: true })) as unknown as MonitorRow[];
  }

  /** Ids of the monitors that watch the user name (ignoring case) on the network (lower-case). */
  async watching(network: string, username: string): Promise<number[]> {
    const rows = await this.models.Profile.sequelize!.query<{ monitor_id: number }>(
      'SELECT DISTINCT monitor_id FROM monitor_profiles WHERE nm_rede = :network AND LOWER(username) = :username ORDER BY monitor_id',
      { replacements: { network, username: username.toLowerCase() }, type: QueryTypes.SELECT },
    );
    return rows.map((row) => Number(row.monitor_id));
  }

  /** The networks the monitor's profiles are on (lower-case). */
  async networksOf(monitorId: number): Promise<Set<string>> {
    const profiles = (await this.models.Profile.findAll({ attributes: ['nm_rede'], where: { monitor_id: monitorId }, raw: true })) as unknown as ProfileRow[];
    return new Set(profiles.map((profile) => profile.nm_rede));
  }

  /**
   * The monitors of `scope` as the contract shows them (what they watch, their latest metrics and the
   * daily series up to `now`), by id, each with the viewer's role in its team (null for a platform admin
   * outside it). Two queries, run together through a Reader: the monitors the viewer may read with what
   * they watch and their latest metrics (`monitorsQuery`), and the series (`seriesQuery`). The series of
   * one monitor is read by its id alone, so that its statement stays simple to plan; it is kept only
   * when the first query found the monitor readable.
   */
  async viewsIn(viewer: Viewer, scope: MonitorScope, now = new Date()): Promise<MonitorView[]> {
    const sequelize = this.models.Monitor.sequelize!;
    const reader = readerOf(sequelize);
    const { sql, values } = scopeSql(viewer, scope);
    const from = seriesStart(now);
    const series = seriesQuery(scope, sql, values, from, now);
    const [monitorRows, seriesRows] = await Promise.all([
      reader.rows<MonitorPartRow>(monitorsQuery(sql, sequelize.getDialect()), [...values, viewer.id]),
      reader.rows<SnapshotPartRow>(series.sql, series.values),
    ]);
    const views = new Map<number, MonitorView>();
    for (const row of monitorRows) {
      const monitorId = asNumber(row.monitor_id);
      const part = asNumber(row.part);
      if (part === PART.monitor) views.set(monitorId, { view: monitorOf(row), role: row.b as TeamRole | null });
      else if (part === PART.profile) views.get(monitorId)?.view.profiles.push(profileOf({ nm_rede: row.a, username: row.b, link: row.c }));
      else if (part === PART.keyword) views.get(monitorId)?.view.keywords.push(row.a);
      else views.get(monitorId)?.view.latest_metrics.push(latestOf(row));
    }
    const seriesByMonitor = new Map<number, StoredSnapshot[]>();
    for (const row of seriesRows) {
      const snapshot = storedSnapshotOf(row);
      const kept = seriesByMonitor.get(snapshot.monitor_id);
      if (kept) kept.push(snapshot);
      else seriesByMonitor.set(snapshot.monitor_id, [snapshot]);
    }
    const dayOf = brasiliaDaysBetween(from, now);
    for (const [monitorId, { view }] of views) view.daily_series = dailySeries(seriesByMonitor.get(monitorId) ?? [], dayOf);
    return [...views.values()];
  }

  /**
   * Stores the snapshots of one monitor in one transaction, all or none. Imports of the same monitor run
   * one at a time (a named lock), so two imports of the same data cannot both create it. A snapshot with
   * a change time never overwrites one stored from a later change (it is outdated; the same time is not
   * later, so a correction sent with it replaces); one without (an import) replaces as always.
   */
  async record(monitorId: number, snapshots: TimedSnapshot[], source: string, now = new Date()): Promise<RecordedSnapshots> {
    const sequelize = this.models.Snapshot.sequelize!;
    const recorded = await withLockedTransaction(sequelize, [`monitor-metrics:${monitorId}`], async (transaction) => {
      const stored = await this.storedAt(monitorId, snapshots, transaction);
      const counts: RecordedSnapshots = { created: 0, replaced: 0, unchanged: 0, outdated: 0 };
      const fresh: Array<Partial<SnapshotRow>> = [];
      for (const snapshot of snapshots) {
        const values = { followers: snapshot.followers, posts: snapshot.posts, engagement: snapshot.engagement, mentions: snapshot.mentions };
        const changedAt = snapshot.changed_at ? new Date(snapshot.changed_at) : null;
        const existing = stored.get(momentKey(snapshot.network, new Date(snapshot.taken_at)));
        if (!existing) {
          fresh.push({ monitor_id: monitorId, network: snapshot.network, taken_at: new Date(snapshot.taken_at), ...values, source, received_at: now, changed_at: changedAt });
          counts.created += 1;
        } else if (changedAt && changedAt < changeTimeOf(existing)) {
          counts.outdated += 1;
        } else if (sameValues(existing, values)) {
          // The same values from a later change: that change's time is the one a next change must not precede.
          if (changedAt && changedAt > changeTimeOf(existing)) await this.models.Snapshot.update({ changed_at: changedAt }, { where: { id: existing.id }, transaction });
          counts.unchanged += 1;
        } else {
          await this.models.Snapshot.update({ ...values, source, received_at: now, changed_at: changedAt }, { where: { id: existing.id }, transaction });
          counts.replaced += 1;
        }
      }
      await this.models.Snapshot.bulkCreate(fresh, { transaction });
      return counts;
    });
    if (recorded.created + recorded.replaced > 0) for (const listener of this.recordedListeners) await listener(monitorId);
    return recorded;
  }

  /** The snapshots of these monitors taken in [from, to], oldest first. */
  async snapshotsBetween(monitorIds: number[], from: Date, to: Date): Promise<StoredSnapshot[]> {
    if (monitorIds.length === 0) return [];
    const rows = (await this.models.Snapshot.findAll({
      where: { monitor_id: { [Op.in]: monitorIds }, taken_at: { [Op.between]: [from, to] } },
      order: [['taken_at', 'ASC'], ['id', 'ASC']],
      raw: true,
    })) as unknown as SnapshotRow[];
    return rows.map(storedSnapshotOf);
  }

  /** When the newest snapshot of these monitors was taken; undefined when they have none. */
  async newestSnapshotTime(monitorIds: number[]): Promise<Date | undefined> {
    if (monitorIds.length === 0) return undefined;
    const [row] = await this.models.Snapshot.sequelize!.query<{ newest: Date | string | null }>(
      'SELECT MAX(taken_at) AS newest FROM metric_snapshots WHERE monitor_id IN (:monitorIds)',
      { replacements: { monitorIds }, type: QueryTypes.SELECT },
    );
    return row?.newest ? new Date(row.newest) : undefined;
  }

  /** The monitor's stored snapshots at the moments of these, by network and moment. */
  private async storedAt(monitorId: number, snapshots: MetricSnapshot[], transaction: Transaction): Promise<Map<string, SnapshotRow>> {
    const moments = snapshots.map((snapshot) => new Date(snapshot.taken_at));
    const rows = (await this.models.Snapshot.findAll({
      where: { monitor_id: monitorId, taken_at: { [Op.in]: moments } },
      raw: true,
      transaction,
    })) as unknown as SnapshotRow[];
    return new Map(rows.map((row) => [momentKey(row.network, new Date(row.taken_at)), row]));
  }
}

// --- The reads of `viewsIn` ----------------------------------------------------------------------

/** Who reads monitors: the caller's user id and whether they are a platform admin. */
export interface Viewer {
  id: number;
  isAdmin: boolean;
}

/** One monitor (if the viewer may read it), or every monitor the viewer may read. */
export type MonitorScope = { monitorId: number } | 'readable';

/** A monitor as the contract shows it, with the viewer's role in its team (null where they have none). */
export interface MonitorView {
  view: SocialMonitor;
  role: TeamRole | null;
}

/**
 * The ids of the monitors of `scope` that the viewer may read, as a subquery (alias `sm`): those of the
 * viewer's teams, every one for a platform admin. Every team role may read a monitor (entities/teams.ts),
 * so being in the team is the whole rule; a monitor outside it reads as no monitor at all (404).
 */
function scopeSql(viewer: Viewer, scope: MonitorScope): { sql: string; values: unknown[] } {
  if (scope !== 'readable') {
    return {
      // BIGINT: PostgreSQL would type the parameter as the column's INTEGER and refuse an id past 2^31 (IdString allows it).
      sql: 'SELECT sm.id FROM social_monitors sm WHERE sm.id = CAST(? AS BIGINT) AND (? OR EXISTS (SELECT 1 FROM entity_members tm WHERE tm.entity_id = sm.entity_id AND tm.user_id = ?))',
      values: [scope.monitorId, viewer.isAdmin, viewer.id],
    };
  }
  if (viewer.isAdmin) return { sql: 'SELECT sm.id FROM social_monitors sm', values: [] };
  return { sql: 'SELECT sm.id FROM entity_members tm JOIN social_monitors sm ON sm.entity_id = tm.entity_id WHERE tm.user_id = ?', values: [viewer.id] };
}

/** The parts of `monitorsQuery`, in the order they come for each monitor. */
const PART = { monitor: 0, profile: 1, keyword: 2, latest: 3 } as const;

/**
 * A row of `monitorsQuery`. `a`, `b`, `c` are the monitor's name and the viewer's role, a profile's
 * network, user name and link, a keyword, or a latest snapshot's network; `at` is the monitor's creation
 * or the snapshot's moment; the counters are a latest snapshot's.
 */
interface MonitorPartRow {
  part: unknown;
  monitor_id: unknown;
  a: string;
  b: string | null;
  c: string | null;
  entity_id: unknown;
  at: unknown;
  followers: unknown;
  posts: unknown;
  engagement: unknown;
  mentions: unknown;
}

/**
 * The monitors of the scope (values: the scope's, then the viewer's id), each followed by its profiles
 * and keywords in their order and the newest snapshot of each of its networks, by monitor id.
 *
 * The networks are found by hopping through the (monitor_id, network, taken_at) index from one network
 * to the next, and each newest snapshot by one seek at the end of its network: a few index entries per
 * network, however long the history (a GROUP BY read every snapshot of the monitor; docs/benchmarks.md).
 * The hop past the last network ends on a NULL, left out before the seek: PostgreSQL would look for
 * `network = NULL` along the whole (monitor_id, taken_at) index.
 *
 * No parameter here bounds a range, so PostgreSQL soon settles on one generic plan for the prepared
 * statement and stops planning it per request; with the series' time range in the same statement it
 * planned it anew every time, which was most of this read's database time.
 */
function monitorsQuery(scope: string, dialect: string): string {
  return `WITH RECURSIVE readable AS (${scope}),
    networks(monitor_id, network) AS (
      SELECT r.id, (SELECT MIN(network) FROM metric_snapshots WHERE monitor_id = r.id) FROM readable r
      UNION ALL
      SELECT n.monitor_id, (SELECT MIN(network) FROM metric_snapshots WHERE monitor_id = n.monitor_id AND network > n.network)
        FROM networks n WHERE n.network IS NOT NULL
    )
    SELECT ${PART.monitor} AS part, mo.id AS monitor_id, 0 AS "position", mo.name AS a, m.role AS b, NULL AS c, mo.entity_id AS entity_id, mo.created_at AS at,
           ${NO_COUNTERS}
      FROM social_monitors mo LEFT JOIN entity_members m ON m.entity_id = mo.entity_id AND m.user_id = ?
     WHERE mo.id IN (SELECT id FROM readable)
    UNION ALL
    SELECT ${PART.profile}, p.monitor_id, p."position", p.nm_rede, p.username, p.link, NULL, NULL, ${NO_COUNTERS}
      FROM monitor_profiles p WHERE p.monitor_id IN (SELECT id FROM readable)
    UNION ALL
    SELECT ${PART.keyword}, k.monitor_id, k."position", k.keyword, NULL, NULL, NULL, NULL, ${NO_COUNTERS}
      FROM monitor_keywords k WHERE k.monitor_id IN (SELECT id FROM readable)
    UNION ALL
    SELECT ${PART.latest}, s.monitor_id, 0, s.network, NULL, NULL, NULL, s.taken_at, s.followers, s.posts, s.engagement, s.mentions
      FROM networks n
      ${newestSnapshotJoin(dialect)}
     WHERE n.network IS NOT NULL
    ORDER BY monitor_id, part, "position", a`;
}

/** The counters of a row that is not a snapshot, typed so that PostgreSQL can unite them with a snapshot's. */
const NO_COUNTERS = 'CAST(NULL AS BIGINT) AS followers, CAST(NULL AS BIGINT) AS posts, CAST(NULL AS DOUBLE PRECISION) AS engagement, CAST(NULL AS BIGINT) AS mentions';

/** A row of `seriesQuery`. */
type SnapshotPartRow = Pick<SnapshotRow, 'monitor_id' | 'network' | 'taken_at' | 'followers' | 'posts' | 'engagement' | 'mentions'>;

/**
 * The snapshots of the series range [from, to] of the scope's monitors, oldest first, from the
 * (monitor_id, taken_at) index. One monitor's are read by its id alone (see `viewsIn`): a statement this
 * simple costs PostgreSQL little to plan, and it plans it for each request, since the range decides
 * how many rows it reads.
 */
function seriesQuery(scope: MonitorScope, scopeSql: string, scopeValues: unknown[], from: Date, to: Date): { sql: string; values: unknown[] } {
  const columns = 's.monitor_id, s.network, s.taken_at, s.followers, s.posts, s.engagement, s.mentions';
  if (scope !== 'readable') {
    return {
      sql: `SELECT ${columns} FROM metric_snapshots s WHERE s.monitor_id = CAST(? AS BIGINT) AND s.taken_at BETWEEN ? AND ? ORDER BY s.taken_at`,
      values: [scope.monitorId, from, to],
    };
  }
  return {
    sql: `SELECT ${columns} FROM metric_snapshots s WHERE s.monitor_id IN (${scopeSql}) AND s.taken_at BETWEEN ? AND ? ORDER BY s.monitor_id, s.taken_at`,
    values: [...scopeValues, from, to],
  };
}

/**
 * The newest snapshot of network `n`, as `s`: one seek at the end of its (monitor_id, network, taken_at)
 * range. PostgreSQL gets a LATERAL subquery: joined `ON s.id = (that seek)`, its planner hashed the
 * whole snapshot table (25 ms for 40,000 rows against 1 ms; docs/benchmarks.md). SQLite has no LATERAL
 * and seeks by id through the join as written.
 */
function newestSnapshotJoin(dialect: string): string {
  const seek = (columns: string) => `SELECT ${columns} FROM metric_snapshots newest
                   WHERE newest.monitor_id = n.monitor_id AND newest.network = n.network
                   ORDER BY newest.taken_at DESC LIMIT 1`;
  if (dialect === 'postgres') return `CROSS JOIN LATERAL (${seek('newest.*')}) s`;
  return `JOIN metric_snapshots s ON s.id = (${seek('newest.id')})`;
}

function monitorOf(row: MonitorPartRow): SocialMonitor {
  return {
    id: asNumber(row.monitor_id),
    entity_id: asNumber(row.entity_id),
    name: row.a,
    keywords: [],
    profiles: [],
    created_at: asIsoTimestamp(row.at),
    latest_metrics: [],
    daily_series: [],
  };
}

function momentKey(network: string, takenAt: Date): string {
  return `${network}@${takenAt.getTime()}`;
}

/** When the change a stored snapshot came from was made; the moment it describes when it has no time of its own. */
function changeTimeOf(row: SnapshotRow): Date {
  return new Date(row.changed_at ?? row.taken_at);
}

function sameValues(row: SnapshotRow, values: Omit<MetricSnapshot, 'network' | 'taken_at'>): boolean {
  return Number(row.followers) === values.followers && Number(row.posts) === values.posts && row.engagement === values.engagement && Number(row.mentions) === values.mentions;
}

/** A stored snapshot from a Sequelize row or a Reader's (timestamps as text on SQLite, counters as text on PostgreSQL). */
function storedSnapshotOf(row: Pick<SnapshotRow, 'monitor_id' | 'network' | 'taken_at' | 'followers' | 'posts' | 'engagement' | 'mentions'>): StoredSnapshot {
  return {
    monitor_id: Number(row.monitor_id),
    network: row.network,
    taken_at: asIsoTimestamp(row.taken_at),
    followers: Number(row.followers),
    posts: Number(row.posts),
    engagement: Number(row.engagement),
    mentions: Number(row.mentions),
  };
}

/** A latest snapshot of `monitorsQuery`, as the contract shows it. */
function latestOf(row: MonitorPartRow): MetricSnapshot {
  const { monitor_id: _, ...metrics } = storedSnapshotOf({
    monitor_id: row.monitor_id as number,
    network: row.a,
    taken_at: row.at as Date,
    followers: row.followers as number,
    posts: row.posts as number,
    engagement: row.engagement as number,
    mentions: row.mentions as number,
  });
  return metrics;
}

function profileOf(row: Pick<ProfileRow, 'nm_rede' | 'username' | 'link'>): MonitoredProfile {
  return { nm_rede: row.nm_rede, ...(row.username ? { username: row.username } : {}), ...(row.link ? { link: row.link } : {}) };
}

/** Midnight (Brasília time) of the first day of the series ending on `now`'s day in Brasília. */
function seriesStart(now: Date): Date {
  return brasiliaMidnight(addDays(brasiliaDay(now), -(SERIES_DAYS - 1)));
}

/**
 * One point per network and day (Brasília's calendar day, `dayOf`): the day's last snapshot. Input
 * oldest first in each network; output by day, then network.
 */
function dailySeries(snapshots: StoredSnapshot[], dayOf: (instant: string) => string): DailyMetric[] {
  const lastOfDay = new Map<string, DailyMetric>();
  for (const { monitor_id: _, taken_at, ...metrics } of snapshots) {
    const date = dayOf(taken_at);
    lastOfDay.set(`${date} ${metrics.network}`, { date, ...metrics });
  }
  return [...lastOfDay.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, point]) => point);
}
