/**
 * The strategy projection as a pure function: the contract's formula step by step (with hand-computed
 * numbers), the accepted spellings of marketshares and tendencies, determinism, and every documented
 * reason a run fails.
 */
import { describe, expect, it } from 'vitest';
import { project, ProjectionError, type EntityInput, type SnapshotInput } from '../src/strategy/projection.js';

const AS_OF = new Date('2026-11-20T12:00:00Z');

function snapshot(network: string, takenAt: string, followers: number, engagement: number, mentions: number): SnapshotInput {
  return { network, taken_at: takenAt, followers, engagement, mentions };
}

function entity(id: number, fields: Partial<EntityInput> = {}): EntityInput {
  return { id, nome: `Entidade ${id}`, monitored: true, marketshare: [], snapshots: [], ...fields };
}

/** An entity whose voice goes from `start` to `now` (mentions only) over the ten days up to AS_OF. */
function voiced(id: number, start: number, now: number, fields: Partial<EntityInput> = {}): EntityInput {
  return entity(id, { snapshots: [snapshot('x', '2026-11-10T12:00:00Z', 0, 0, start), snapshot('x', '2026-11-20T12:00:00Z', 0, 0, now)], ...fields });
}

function failure(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ProjectionError);
    return (error as Error).message;
  }
  throw new Error('the projection did not fail');
}

describe('the projection formula', () => {
  it('combines shares of voice, their trend, marketshares and tendencies as documented', () => {
    const projection = project({
      horizonDays: 10,
      asOf: AS_OF,
      entities: [
        voiced(1, 50, 60, { marketshare: [{ principal: true, marketshare: '30', tendency: 'up' }] }),
        voiced(2, 50, 40, { marketshare: [{ principal: null, marketshare: '25', tendency: 'stable' }] }),
      ],
    });
    // Shares of voice 0.6 / 0.4 (0.5 / 0.5 ten days before): trend ±0.01 a day.
    // Current: (0.30 + 0.6) / 2 = 0.45 and (0.25 + 0.4) / 2 = 0.325.
    // Raw: 0.45 + 10 × (0.005 + 0.001) = 0.51 and 0.325 + 10 × (−0.005) = 0.275; projected: raw / 0.785.
    expect(projection).toEqual({
      as_of: '2026-11-20T12:00:00.000Z',
      window_days: 30,
      horizon_days: 10,
      entities: [
        { entity_id: 1, nome: 'Entidade 1', share_of_voice: 0.6, share_of_voice_trend: 0.01, marketshare: 0.3, tendency: 1, current_share: 0.45, projected_share: 0.6497 },
        { entity_id: 2, nome: 'Entidade 2', share_of_voice: 0.4, share_of_voice_trend: -0.01, marketshare: 0.25, tendency: 0, current_share: 0.325, projected_share: 0.3503 },
      ],
    });
  });

  it('counts interactions (engagement × followers) and mentions, over each network\'s newest snapshot, summed across networks', () => {
    const projection = project({
      horizonDays: 1,
      asOf: AS_OF,
      entities: [
        // instagram: 0.1 × 1000 + 20 = 120 (the older 999 is superseded); tiktok: 0.5 × 100 + 30 = 80. Voice 200.
        entity(1, {
          snapshots: [
            snapshot('instagram', '2026-11-19T12:00:00Z', 0, 0, 999),
            snapshot('tiktok', '2026-11-20T11:00:00Z', 100, 0.5, 30),
            snapshot('instagram', '2026-11-20T12:00:00Z', 1000, 0.1, 20),
          ],
        }),
        entity(2, { snapshots: [snapshot('instagram', '2026-11-20T12:00:00Z', 0, 0, 300)] }), // voice 300
      ],
    });
    expect(projection.entities.map((row) => row.share_of_voice)).toEqual([0.4, 0.6]);
    // Without marketshares, the current share is the share of voice.
    expect(projection.entities.map((row) => [row.marketshare, row.current_share])).toEqual([[null, 0.4], [null, 0.6]]);
  });

  it('measures the trend over the span the snapshots cover, at least one day', () => {
    const sameDay = project({
      horizonDays: 1,
      asOf: AS_OF,
      entities: [
        entity(1, { snapshots: [snapshot('x', '2026-11-20T06:00:00Z', 0, 0, 10), snapshot('x', '2026-11-20T12:00:00Z', 0, 0, 30)] }),
        entity(2, { snapshots: [snapshot('x', '2026-11-20T12:00:00Z', 0, 0, 10)] }),
      ],
    });
    // Start shares 0.5 / 0.5 (each network's oldest), now 0.75 / 0.25, over six hours: counted as one day.
    expect(sameDay.entities.map((row) => row.share_of_voice_trend)).toEqual([0.25, -0.25]);
  });

  it('drops a share that would fall below zero to zero and renormalises the rest', () => {
    const projection = project({
      horizonDays: 365,
      asOf: AS_OF,
      entities: [voiced(1, 50, 90), voiced(2, 50, 10, { marketshare: [{ principal: true, marketshare: '5', tendency: 'down' }] })],
    });
    expect(projection.entities.map((row) => row.projected_share)).toEqual([1, 0]);
  });

  it('keeps the entities in the order asked, and gives the same answer every time', () => {
    const input = { horizonDays: 45, asOf: AS_OF, entities: [voiced(3, 10, 20), voiced(1, 30, 25), voiced(2, 7, 9)] };
    const first = project(input);
    expect(first.entities.map((row) => row.entity_id)).toEqual([3, 1, 2]);
    expect(project(structuredClone(input))).toEqual(first);
    const total = first.entities.reduce((sum, row) => sum + row.projected_share, 0);
    expect(total).toBeCloseTo(1, 3);
  });

  it('uses the principal marketshare entry, or the first when none is principal', () => {
    const principal = project({
      horizonDays: 1,
      asOf: AS_OF,
      entities: [
        voiced(1, 1, 1, { marketshare: [{ principal: false, marketshare: '10', tendency: null }, { principal: true, marketshare: '40', tendency: 'down' }] }),
        voiced(2, 1, 1, { marketshare: [{ principal: null, marketshare: '20', tendency: 'up' }, { principal: null, marketshare: '90', tendency: 'down' }] }),
      ],
    });
    expect(principal.entities.map((row) => [row.marketshare, row.tendency])).toEqual([[0.4, -1], [0.2, 1]]);
  });

  it.each([
    ['23.5', 0.235],
    ['23,5', 0.235],
    ['23.5%', 0.235],
    [' 7 % ', 0.07],
    ['0', 0],
    ['100', 1],
  ])('reads the marketshare %j as %d', (text, fraction) => {
    const projection = project({ horizonDays: 1, asOf: AS_OF, entities: [voiced(1, 1, 1, { marketshare: [{ principal: true, marketshare: text, tendency: null }] }), voiced(2, 1, 1)] });
    expect(projection.entities[0]!.marketshare).toBe(fraction);
  });

  it.each([
    ['up', 1],
    ['Alta', 1],
    ['down', -1],
    ['BAIXA', -1],
    ['stable', 0],
    ['estável', 0],
    ['estavel', 0],
    ['', 0],
    [null, 0],
  ])('reads the tendency %j as %d', (text, sign) => {
    const projection = project({ horizonDays: 1, asOf: AS_OF, entities: [voiced(1, 1, 1, { marketshare: [{ principal: true, marketshare: '10', tendency: text }] }), voiced(2, 1, 1)] });
    expect(projection.entities[0]!.tendency).toBe(sign);
  });
});

describe('why a projection fails', () => {
  it('names an entity without a monitor', () => {
    expect(failure(() => project({ horizonDays: 1, asOf: AS_OF, entities: [voiced(1, 1, 1), entity(7, { nome: 'Sem Monitor', monitored: false })] }))).toBe(
      'Entity 7 (Sem Monitor) has no social monitor.',
    );
  });

  it('says when no compared entity has any snapshot', () => {
    expect(failure(() => project({ horizonDays: 1, asOf: undefined, entities: [entity(1), entity(2)] }))).toBe('None of the compared entities has a metric snapshot.');
  });

  it('names an entity without a snapshot in the window', () => {
    expect(failure(() => project({ horizonDays: 1, asOf: AS_OF, entities: [voiced(1, 1, 1), entity(2, { nome: 'Quieta' })] }))).toBe(
      'Entity 2 (Quieta) has no metric snapshot in the 30 days up to 2026-11-20T12:00:00.000Z.',
    );
  });

  it('says when nobody has any voice', () => {
    expect(failure(() => project({ horizonDays: 1, asOf: AS_OF, entities: [voiced(1, 0, 0), voiced(2, 0, 0)] }))).toBe(
      'No compared entity has any voice (mentions or interactions) in the window.',
    );
  });

  it.each(['abc', '101', '-3', '1e2', '12.5.1', ''])('quotes a marketshare that is not a number from 0 to 100: %j', (text) => {
    const entities = [voiced(1, 1, 1, { nome: 'Maria', marketshare: [{ principal: true, marketshare: text, tendency: null }] }), voiced(2, 1, 1)];
    expect(failure(() => project({ horizonDays: 1, asOf: AS_OF, entities }))).toBe(`The marketshare "${text}" of Entity 1 (Maria) is not a number from 0 to 100.`);
  });

  it('quotes a tendency it does not know', () => {
    const entities = [voiced(1, 1, 1), voiced(2, 1, 1, { nome: 'João', marketshare: [{ principal: true, marketshare: '10', tendency: 'sideways' }] })];
    expect(failure(() => project({ horizonDays: 1, asOf: AS_OF, entities }))).toBe(
      'The tendency "sideways" of Entity 2 (João) is not one of up, down or stable (alta, baixa, estável).',
    );
  });

  it('says when every projected share reaches zero', () => {
    const falling = { marketshare: [{ principal: true, marketshare: '0', tendency: 'down' }] };
    const entities = [voiced(1, 50, 50, falling), voiced(2, 50, 50, falling)];
    expect(failure(() => project({ horizonDays: 365, asOf: AS_OF, entities }))).toBe('Every projected share reaches 0 within 365 days.');
  });
});
