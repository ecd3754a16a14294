'use strict';
// Instants on the wire are ISO 8601 strings with up to six fractional digits and a zone.
// Inside, an instant is an integer count of microseconds since the Unix epoch, held in a
// plain Number: exact up to 2^53 µs, i.e. until the year 2255, far past any instant the
// harness uses (its clock starts in 2026 and moves by at most a century at a time).

const INSTANT =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?(Z|[+-]\d{2}:\d{2})$/;

const MICROS_PER_SECOND = 1_000_000;

/** Microseconds since the epoch for an ISO instant; null when the text is not one. */
function parseInstant(text) {
  const m = typeof text === 'string' ? INSTANT.exec(text) : null;
  if (!m) return null;
  const [, year, month, day, hour, minute, second, fraction = '', zone] = m;
  const date = new Date(0);
  // setUTCFullYear, not Date.UTC: Date.UTC maps the years 0-99 onto 1900-1999.
  date.setUTCFullYear(+year, +month - 1, +day);
  date.setUTCHours(+hour, +minute, +second, 0);
  let micros = date.getTime() * 1000 + Number(fraction.padEnd(6, '0'));
  if (zone !== 'Z') {
    const sign = zone[0] === '-' ? -1 : 1;
    const offsetMinutes = Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6));
    micros -= sign * offsetMinutes * 60 * MICROS_PER_SECOND;
  }
  return Number.isSafeInteger(micros) ? micros : null;
}

/** The harness's own form: UTC, exactly six fractional digits, `Z`. */
function formatInstant(micros) {
  const millis = Math.floor(micros / 1000);
  const withinSecond = ((micros % MICROS_PER_SECOND) + MICROS_PER_SECOND) % MICROS_PER_SECOND;
  const seconds = new Date(millis).toISOString().slice(0, 19); // YYYY-MM-DDTHH:MM:SS
  return `${seconds}.${String(withinSecond).padStart(6, '0')}Z`;
}

module.exports = { parseInstant, formatInstant, MICROS_PER_SECOND };
