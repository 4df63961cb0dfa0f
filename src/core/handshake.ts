// Who a WebSocket handshake is, from the raw facts an adapter has (the endpoint, the token it carried, the remote
// address), or the connection error that refuses it (W1) with the sentence the client reads.
import type { ErrorCode } from '../../generated/index.js';
import type { ClientKind, Directory, Principal } from './directory.js';

export interface HandshakeFacts {
  /** The endpoint the client upgraded on. */
  endpoint: ClientKind;
  /** From `Authorization: Bearer` or `?token=`; undefined when neither was sent. */
  token: string | undefined;
  /** The remote IP address, for the per-address bound (L18); undefined when unknown. */
  address: string | undefined;
}

export type HandshakeRefusalCode = Extract<ErrorCode, 'UNAUTHORIZED' | 'TOKEN_REVOKED' | 'FORBIDDEN' | 'TOO_MANY_CONNECTIONS'>;

export type Identified = { ok: true; principal: Principal } | { ok: false; code: HandshakeRefusalCode; error: string };

export function identify(directory: Directory, facts: HandshakeFacts, now: number): Identified {
  if (!facts.token) return { ok: false, code: 'UNAUTHORIZED', error: 'No token: send Authorization: Bearer <TOKEN> or ?token=<TOKEN>.' };
  const auth = directory.authenticate(facts.token, now);
  if (!auth.ok) {
    const error = auth.code === 'TOKEN_REVOKED' ? "This token's app or agent was deactivated." : 'The token is wrong, expired or rotated out.';
    return { ok: false, code: auth.code, error };
  }
  const { kind } = auth.principal;
  if (kind !== facts.endpoint) {
    const takes = facts.endpoint === 'app' ? 'app tokens (rlk_)' : 'agent tokens (rla_)';
    return { ok: false, code: 'FORBIDDEN', error: `This endpoint takes ${takes}; use /v1/ws/${kind}.` };
  }
  return auth;
}
