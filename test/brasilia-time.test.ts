/**
 * Days in Brasília time (src/brasilia-time.ts): the day of an instant, a day's midnight, and the fast
 * reader of days over a span, across the daylight saving time Brazil had until 2019.
 */
import { describe, expect, it } from 'vitest';
import { addDays, brasiliaDay, brasiliaDaysBetween, brasiliaMidnight, brasiliaOffsetMinutes } from '../src/brasilia-time.js';

describe('Brasília time', () => {
  it('puts an evening in Brasília on its own day, though UTC is already on the next', () => {
    expect(brasiliaDay(new Date('2026-11-28T01:30:00Z'))).toBe('2026-11-27');
    expect(brasiliaDay(new Date('2026-11-28T03:00:00Z'))).toBe('2026-11-28');
  });

  it('reads the offset from the time zone database: UTC-3 now, UTC-2 in a summer before 2019', () => {
    expect(brasiliaOffsetMinutes(new Date('2026-11-28T12:00:00Z'))).toBe(-180);
    expect(brasiliaOffsetMinutes(new Date('2018-12-01T12:00:00Z'))).toBe(-120);
  });

  it("finds a day's midnight, in summer time too", () => {
    expect(brasiliaMidnight('2026-11-28').toISOString()).toBe('2026-11-28T03:00:00.000Z');
    expect(brasiliaMidnight('2018-12-01').toISOString()).toBe('2018-12-01T02:00:00.000Z');
  });

  it('counts days across months and years', () => {
    expect(addDays('2026-03-01', -1)).toBe('2026-02-28');
    expect(addDays('2026-12-31', 1)).toBe('2027-01-01');
    expect(addDays('2026-11-28', -29)).toBe('2026-10-30');
  });

  it('reads the days of a span by a shift when its offset holds, and by the database across a change', () => {
    const steady = brasiliaDaysBetween(new Date('2026-10-30T03:00:00Z'), new Date('2026-11-28T12:00:00Z'));
    expect(steady('2026-11-10T02:30:00.000Z')).toBe('2026-11-09');
    expect(steady(new Date('2026-11-10T03:00:00Z'))).toBe('2026-11-10');
    // Texts as the store gives them, on either side of Brasília's midnight, and at a day's first and last minute.
    expect(['2026-11-10T02:59:59.999Z', '2026-11-10T03:00:00.000Z', '2026-11-10T23:59:00Z', '2026-11-11T00:00:00Z'].map(steady)).toEqual(['2026-11-09', '2026-11-10', '2026-11-10', '2026-11-10']);
    expect(steady('2026-11-01T01:00:00.000Z')).toBe('2026-10-31');
    // Summer time began on 2018-11-04: at 02:30 UTC on the 10th it was already 00:30 that day in Brasília.
    const acrossAChange = brasiliaDaysBetween(new Date('2018-10-20T03:00:00Z'), new Date('2018-11-20T12:00:00Z'));
    expect(acrossAChange('2018-11-10T02:30:00.000Z')).toBe('2018-11-10');
    expect(acrossAChange('2018-10-25T02:30:00.000Z')).toBe('2018-10-24');
  });
});
