// Identifiers the service generates: event ids (ULIDs: unique and sortable by time), registration ids that read
// like their names, and token secrets.
import { randomFillSync } from 'node:crypto';
import { encodeTime, monotonicFactory } from 'ulid';
import { customAlphabet } from 'nanoid';
import { LIMITS } from '../../generated/index.js';
import type { Clock } from '../shared/clock.js';

const LOWER_ALNUM = '0123456789abcdefghijklmnopqrstuvwxyz';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SUFFIX_LENGTH = 6;
/** 43 base62 characters carry 256 bits; the protocol asks for at least 32 characters. */
const SECRET_LENGTH = 43;

const suffix = customAlphabet(LOWER_ALNUM, SUFFIX_LENGTH);
export const tokenSecret = customAlphabet(BASE62, SECRET_LENGTH);
/** 16 of 36 characters: 82 random bits, so that no two connections of any node or run ever share an id. */
const connectionSecret = customAlphabet(LOWER_ALNUM, 16);

/**
 * A connection's id as the admin API names it (`ConnectionId`: `c-` and 16 characters, H8). Random rather than a
 * count: a node's count starts again at each start, and an operator's id must never name another connection.
 */
export const connectionId = (): string => `c-${connectionSecret()}`;

/**
 * The ulid package asks the system for one random byte per character (16 calls per new millisecond); under load
 * those calls showed in the profile. This gives it the same CSPRNG bytes, fetched 4 KiB at a time.
 */
function pooledRandom(): () => number {
  const pool = new Uint8Array(4096);
  let next = pool.length;
  return () => {
    if (next === pool.length) {
      randomFillSync(pool);
      next = 0;
    }
    return pool[next++]! / 256;
  };
}

/**
 * A ULID from the bridge's clock, strictly increasing even within one millisecond; `suffix` (a node's, on several
 * nodes) follows it, so the ids still sort by time.
 */
export function eventIdFactory(clock: Clock, suffix = ''): () => string {
  const next = monotonicFactory(pooledRandom());
  return suffix ? () => next(clock.now()) + suffix : () => next(clock.now());
}

/**
 * The smallest event id made at `ms` or later (its time part alone sorts before any id of that millisecond): an
 * event's id is made at or after its receipt, so `event_id >= eventIdFloor(t)` bounds an index range scan by time.
 */
export const eventIdFloor = (ms: number): string => encodeTime(ms);

/** `Maths Tutor` -> `maths-tutor-k3x9q2`: lowercase letters, digits and hyphens, at most idMaxChars. */
export function registrationId(name: string): string {
  const room = LIMITS.idMaxChars - SUFFIX_LENGTH - 1;
  const slug = name
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, Math.min(room, 40))
    .replace(/-+$/, '');
  return slug ? `${slug}-${suffix()}` : suffix();
}
