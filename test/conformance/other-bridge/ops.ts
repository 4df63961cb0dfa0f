// The operator interface (`POST /_ops`, one JSON `{op, ...}` per request). Its shapes are its own on purpose:
// the conformance suite reaches it only through provision.mjs, which translates.
import type { Clock } from './clock.js';
import type { Hub } from './connections.js';
import type { Client, Registry } from './registry.js';

export const OPS_KEY = 'other-bridge-ops-key';

export class OpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

type Body = Record<string, unknown>;

function text(body: Body, field: string, fallback?: string): string {
  const value = body[field] ?? fallback;
  if (typeof value !== 'string') throw new OpError(400, `${field} must be a string`);
  return value;
}

function refs(value: unknown, field: string): string[] | null {
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string'))
    throw new OpError(400, `${field} must be a list of refs or null`);
  return value;
}

export function runOp(body: Body, registry: Registry, hub: Hub, clock: Clock): Body {
  const client = (kind?: 'agent'): Client => {
    const found = registry.clients.get(text(body, kind ?? 'ref'));
    if (!found || (kind && found.kind !== kind)) throw new OpError(404, 'no such client');
    return found;
  };
  switch (body['op']) {
    case 'mkorg':
      return { organisation: { ref: registry.addOrg(text(body, 'label')) } };
    case 'mkclient': {
      const org = text(body, 'org');
      const kind = body['kind'];
      const ttl = body['ttl'] ?? 14;
      if (!registry.orgs.has(org)) throw new OpError(404, 'no such organisation');
      if (kind !== 'app' && kind !== 'agent') throw new OpError(400, 'kind must be app or agent');
      if (typeof ttl !== 'number' || !(ttl > 0)) throw new OpError(400, 'ttl must be a positive number of days');
      const { client: c, token } = registry.addClient({
        org,
        kind,
        label: text(body, 'label'),
        about: text(body, 'about', ''),
        ttlDays: ttl,
        allow: refs(body['allow'], 'allow'),
      });
      return { client: { ref: c.ref, secret: token, label: c.label, about: c.about } };
    }
    case 'rotate': {
      const c = client();
      if (c.disabled) throw new OpError(409, 'client is disabled');
      return { secret: registry.rotate(c) };
    }
    case 'disable': {
      const c = client();
      c.disabled = true;
      hub.evict(c.ref, 'TOKEN_REVOKED');
      return { ok: true };
    }
    case 'allow':
      client().allow = refs(body['apps'], 'apps');
      return { ok: true };
    case 'tick': {
      const ms = body['ms'];
      if (typeof ms !== 'number' || !(ms >= 0)) throw new OpError(400, 'ms must be a non-negative number');
      clock.advance(ms);
      return { now: clock.now() };
    }
    case 'sessions':
      return { rows: registry.sessionsOf(client('agent').ref) };
    case 'drop': {
      const org = text(body, 'org');
      for (const c of registry.clients.values()) if (c.org === org) hub.evict(c.ref, 'UNAUTHORIZED');
      registry.dropOrg(org);
      return { ok: true };
    }
    default:
      throw new OpError(400, 'unknown op');
  }
}
