// A time range for the event log's filters: two datetime-local inputs read as UTC (the clock every time on the page
// is shown in), sent and kept in the address as ISO 8601 (`since`, `until`).
import { field, input } from './forms.js';

/** `2026-11-22T12:00:00.000Z` -> `2026-11-22T12:00` (what a datetime-local input holds), or '' for none. */
const toInput = (iso) => (iso && !Number.isNaN(Date.parse(iso)) ? new Date(iso).toISOString().slice(0, 16) : '');

/** `2026-11-22T12:00` read as UTC -> `2026-11-22T12:00:00.000Z`; '' for an empty input, undefined when unreadable. */
export function toIso(value) {
  if (!value) return '';
  const ms = Date.parse(`${value.length === 16 ? `${value}:00` : value}Z`);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}

/** The `since` and `until` fields, filled from the address; until must come after since. */
export function timeRangeFields(filters) {
  const since = field({
    name: 'since',
    label: 'From (UTC)',
    control: input({ type: 'datetime-local', value: toInput(filters.since) }),
    read: (c) => toIso(c.value),
    check: (v) => (v === undefined ? 'Enter a date and a time, or nothing.' : undefined),
  });
  const until = field({
    name: 'until',
    label: 'Until (UTC, not included)',
    control: input({ type: 'datetime-local', value: toInput(filters.until) }),
    read: (c) => toIso(c.value),
    check: (v) => {
      if (v === undefined) return 'Enter a date and a time, or nothing.';
      const from = since.value();
      return v && from && v <= from ? 'Choose a time after the start of the range.' : undefined;
    },
  });
  return [since, until];
}
