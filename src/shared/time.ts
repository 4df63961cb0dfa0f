// Time as the bridge and its SDK count and write it: days in milliseconds (TTLs and retention are set in days,
// clocks count milliseconds), and an instant written for the wire, the admin API and people.

export const DAY_MS = 86_400_000;

/** An instant (epoch ms) as the protocol writes it: ISO 8601 in UTC, with milliseconds (`2026-11-22T12:00:00.000Z`). */
export const iso = (ms: number): string => new Date(ms).toISOString();
