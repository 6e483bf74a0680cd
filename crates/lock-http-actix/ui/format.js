// How the page writes times, remaining leases and values as text.

const clockTime = new Intl.DateTimeFormat(undefined, {
  hour: '2-digit', minute: '2-digit', second: '2-digit', fractionalSecondDigits: 3, hourCycle: 'h23',
});
const dateTime = new Intl.DateTimeFormat(undefined, {
  year: 'numeric', month: 'short', day: 'numeric',
  hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23',
});

/** A remaining lease: tenths of a second under a minute, where a countdown is worth watching. */
export function remainingText(ms) {
  if (!(ms > 0)) return 'expiring';
  if (ms < 60_000) return `${(Math.floor(ms / 100) / 10).toFixed(1)} s`;
  const seconds = Math.floor(ms / 1000);
  const pad = (n) => String(n).padStart(2, '0');
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${pad(seconds % 60)} s`;
  const hours = Math.floor(seconds / 3600);
  return `${hours} h ${pad(Math.floor((seconds % 3600) / 60))} min`;
}

/** The local time of day of an RFC 3339 instant, to the millisecond (feed rows). */
export function timeOfDay(rfc3339) {
  const at = new Date(rfc3339);
  return Number.isNaN(at.getTime()) ? rfc3339 : clockTime.format(at);
}

/** The local date and time of an RFC 3339 instant (history rows, which may be days old). */
export function dateAndTime(rfc3339) {
  const at = new Date(rfc3339);
  return Number.isNaN(at.getTime()) ? rfc3339 : dateTime.format(at);
}

const VALUE_CHARS = 80;

/**
 * A holder's value as compact JSON, cut to fit a table cell; `full` is the whole text for a
 * tooltip. Absent values are an empty string.
 */
export function valueText(value) {
  if (value === undefined) return { short: '', full: '' };
  const full = JSON.stringify(value);
  const short = full.length > VALUE_CHARS ? `${full.slice(0, VALUE_CHARS - 1)}…` : full;
  return { short, full };
}

/** "1 lock", "2 locks". */
export function counted(n, one, many) {
  return `${n} ${n === 1 ? one : many}`;
}
