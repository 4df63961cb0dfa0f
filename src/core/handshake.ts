// Who a handshake is, decided from the raw facts a transport has: the path it asked for, its Authorization header,
// its query string and the remote address. Both the WebSocket endpoints (W1) and the HTTP directory ask here, so
// the token carriers, their precedence and the sentences a refused client reads exist once.
import { ENDPOINT_PATHS, type ClientKind, type ErrorCode } from '../../generated/index.js';
import { errorText } from '../shared/error-text.js';
import { TOKEN_PREFIX, type Directory, type Principal } from './directory.js';

/** What a transport knows of a connection attempt before the core decides anything. */
export interface ConnectionFacts {
  /** The request's path, without the query string. */
  path: string;
  /** The Authorization header as sent, if any. */
  authorization: string | undefined;
  /** The query string's parameters (`?token=`). */
  query: URLSearchParams;
  /** The remote IP address, for the per-address bound (L18) and logs; undefined when unknown. */
  address: string | undefined;
  /** Opened with `?resume=1` (R1): taken into account on the app endpoint only. */
  resumable?: boolean;
  /** Opened with `?cancel=1` (S1): taken into account on the agent endpoint only. */
  cancellable?: boolean;
}

export type HandshakeRefusalCode = Extract<
  ErrorCode,
  'UNAUTHORIZED' | 'TOKEN_REVOKED' | 'FORBIDDEN' | 'TOO_MANY_CONNECTIONS'
>;

export type PrincipalOf<K extends ClientKind> = Extract<Principal, { kind: K }>;

export type Identified<K extends ClientKind = ClientKind> =
  { ok: true; principal: PrincipalOf<K> } | { ok: false; code: HandshakeRefusalCode; error: string };

const KIND_OF_PATH = new Map<string, ClientKind>(
  Object.entries(ENDPOINT_PATHS).map(([kind, path]) => [path, kind as ClientKind]),
);

/** The kind of client a WebSocket path is for, or undefined when it is not an endpoint (HTTP 404). */
export function endpointOf(path: string): ClientKind | undefined {
  return KIND_OF_PATH.get(path);
}

/** The token of `Authorization: Bearer`, or undefined when the header is absent or not a Bearer. */
export function bearerToken(authorization: string | undefined): string | undefined {
  return /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
}

/** The place that takes one kind of token, as a refused client reads it. */
export interface Taker<K extends ClientKind = ClientKind> {
  kind: K;
  /** A WebSocket endpoint (it also takes `?token=`, and can say where a token of the other kind belongs), or the
   * name of an HTTP place ("The directory"). */
  place: 'websocket' | string;
}

/** The principal `token` authenticates as at `taker`, or the refusal with the catalogue's sentence for it. */
export function authenticate<K extends ClientKind>(
  directory: Directory,
  token: string | undefined,
  taker: Taker<K>,
  now: number,
): Identified<K> {
  const { kind, place } = taker;
  const prefix = TOKEN_PREFIX[kind];
  if (!token)
    return {
      ok: false,
      code: 'UNAUTHORIZED',
      error: errorText('UNAUTHORIZED', place === 'websocket' ? 'no_token_websocket' : 'no_token', { kind, prefix }),
    };
  const auth = directory.authenticate(token, now);
  if (!auth.ok) {
    const error =
      auth.code === 'TOKEN_REVOKED'
        ? errorText('TOKEN_REVOKED', 'deactivated', { kind })
        : errorText('UNAUTHORIZED', 'wrong_token');
    return { ok: false, code: auth.code, error };
  }
  const actual = auth.principal.kind;
  if (actual !== kind) {
    const error =
      place === 'websocket'
        ? errorText('FORBIDDEN', 'wrong_endpoint', { kind, prefix, actual, path: ENDPOINT_PATHS[actual] })
        : errorText('FORBIDDEN', 'wrong_kind', { place, kind, prefix, actual });
    return { ok: false, code: 'FORBIDDEN', error };
  }
  return { ok: true, principal: auth.principal as PrincipalOf<K> }; // its kind was just checked
}

/** A WebSocket handshake on the endpoint of `kind`: the header carrier first (it stays out of access logs), then `?token=`. */
export function identify(directory: Directory, kind: ClientKind, facts: ConnectionFacts, now: number): Identified {
  const token = bearerToken(facts.authorization) ?? facts.query.get('token') ?? undefined;
  return authenticate(directory, token, { kind, place: 'websocket' }, now);
}
