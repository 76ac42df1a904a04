/**
 * Days as a Brazilian campaign counts them: calendar days in Brasília time (America/Sao_Paulo), not UTC
 * days. At 22:00 in Brasília it is already tomorrow in UTC, so a UTC day would put an evening's rally
 * and its numbers on the next day.
 *
 * Brazil has kept UTC-3 all year since 2019, but earlier years had daylight saving time and a law could
 * bring it back, so offsets come from the time zone database (Intl), not from a constant.
 */
export const BRASILIA_TIME_ZONE = 'America/Sao_Paulo';

const MINUTE_MS = 60 * 1000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;

const dayFormat = new Intl.DateTimeFormat('en-CA', { timeZone: BRASILIA_TIME_ZONE, year: 'numeric', month: '2-digit', day: '2-digit' });
const offsetFormat = new Intl.DateTimeFormat('en-US', { timeZone: BRASILIA_TIME_ZONE, timeZoneName: 'longOffset' });

/** The day (`YYYY-MM-DD`) it is in Brasília at `instant`. */
export function brasiliaDay(instant: Date = new Date()): string {
  return dayFormat.format(instant);
}

/**
 * Offsets by UTC hour already read: every read of the monitors asks for those of its span's ends, and
 * formatToParts costs microseconds. Offsets change on the hour, so an hour has one.
 */
const offsetsByHour = new Map<number, number>();
const OFFSETS_KEPT = 1_000;

/** Brasília's offset from UTC at `instant`, in minutes (-180 for UTC-3). */
export function brasiliaOffsetMinutes(instant: Date): number {
  const hour = Math.floor(instant.getTime() / HOUR_MS);
  let offset = offsetsByHour.get(hour);
  if (offset === undefined) {
    if (offsetsByHour.size >= OFFSETS_KEPT) offsetsByHour.clear();
    offset = offsetOf(new Date(hour * HOUR_MS));
    offsetsByHour.set(hour, offset);
  }
  return offset;
}

function offsetOf(instant: Date): number {
  const name = offsetFormat.formatToParts(instant).find((part) => part.type === 'timeZoneName')?.value ?? 'GMT';
  const [, sign, hours, minutes] = /^GMT(?:([+-])(\d{2}):(\d{2}))?$/.exec(name) ?? [];
  if (!sign) return 0;
  return (sign === '-' ? -1 : 1) * (Number(hours) * 60 + Number(minutes));
}

/** The day `days` after `day` (before, when negative), both `YYYY-MM-DD`. */
export function addDays(day: string, days: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}

/** The instant a Brasília day (`YYYY-MM-DD`) starts: its midnight in Brasília. */
export function brasiliaMidnight(day: string): Date {
  const utcMidnight = Date.parse(`${day}T00:00:00Z`);
  // The offset a few hours into the day: a day whose clocks moved at midnight starts at 01:00 local.
  const offset = brasiliaOffsetMinutes(new Date(utcMidnight + 6 * 60 * MINUTE_MS));
  return new Date(utcMidnight - offset * MINUTE_MS);
}

/**
 * The Brasília day of each instant between `from` and `to`, fast: when the offset is the same at both
 * ends (every span since 2019), a shift of the UTC time; otherwise the time zone database per instant.
 * A month of snapshots has hundreds, and a call to Intl costs microseconds each. For spans of weeks:
 * Brazil's summer times lasted months, so no span this short held two changes that cancelled out.
 */
export function brasiliaDaysBetween(from: Date, to: Date): (instant: string | Date) => string {
  const offset = brasiliaOffsetMinutes(from);
  if (offset !== brasiliaOffsetMinutes(to)) return (instant) => brasiliaDay(new Date(instant));
  const shifted = (instant: string | Date) => new Date(new Date(instant).getTime() + offset * MINUTE_MS).toISOString().slice(0, 10);
  return (instant) => {
    // An ISO text in UTC whose time stays within its day once shifted is on its own date: no Date needed.
    if (typeof instant === 'string' && ISO_UTC.test(instant)) {
      const minutes = Number(instant.slice(11, 13)) * 60 + Number(instant.slice(14, 16)) + offset;
      if (minutes >= 0 && minutes < 24 * 60) return instant.slice(0, 10);
    }
    return shifted(instant);
  };
}

const ISO_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d(?::\d\d(?:\.\d+)?)?Z$/;
