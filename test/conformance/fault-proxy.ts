// A fake bridge for testing the conformance suite: an HTTP + WebSocket proxy on port 0 in front of a real bridge,
// transparent except for one optional FAULT, a small function over frames that makes it break one rule of the
// protocol. If the suite passes through the proxy with no fault and fails with each fault exactly on the rules
// that fault breaks, the suite can tell a conforming bridge from a broken one.
//
// HTTP requests (admin API, directory, test clock) are forwarded unchanged. WebSocket upgrades on /v1/ws/app and
// /v1/ws/agent are forwarded with the same path, query and Authorization header; once the bridge has accepted,
// the client's handshake is completed and frames and close codes/reasons are relayed both ways. Frames a fault
// leaves alone are relayed byte for byte.
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import WebSocket, { WebSocketServer, type RawData } from 'ws';
import { CLOSE_CODES, ENDPOINT_PATHS, LIMITS, type ClientKind } from '../../generated/index.js';

export type Frame = Record<string, unknown>;

/** One relayed WebSocket connection, as a fault sees it. */
export interface Link {
  readonly endpoint: ClientKind;
  /** The token the client connected with (the Authorization header wins over ?token=, as on the bridge). */
  readonly token: string | undefined;
  /** The app_id or agent_id the token names (`rlk_{app_id}_…`, `rla_{agent_id}_…`). */
  readonly ownerId: string | undefined;
  /** Opened with `?resume=1` (the resume extension). */
  readonly resumable: boolean;
  /** Opened with `?cancel=1` (the cancel extension). */
  readonly cancellable: boolean;
  /** Sends a frame to this link's client, as if the bridge had sent it. */
  sendToClient(frame: Frame): void;
}

/**
 * What a fault returns for a frame: `undefined` relays it untouched, `null` drops it, a frame is relayed instead.
 * `links` are the proxy's open connections.
 */
type FrameRule = (frame: Frame, link: Link, links: ReadonlySet<Link>) => Frame | null | undefined;

export interface Fault {
  /** A frame from the bridge on its way to the client. */
  toClient?: FrameRule;
  /** A frame from the client on its way to the bridge. */
  toBridge?: FrameRule;
  /** A close from the bridge on its way to the client. */
  close?: (code: number, reason: string, link: Link) => { code: number; reason: string };
}

/**
 * Faults of the resume extension (R1-R7), each breaking one rule of it. What they must remember (resume tokens
 * given, positions relayed) is the proxy's, across connections, as a bridge's would be.
 */
const resumeTokens = new Map<string, string>(); // event_id -> the resume_token its accepted carried
const firstTokenOfApp = new Map<string, string>(); // app_id -> the first resume_token one of its connections got
const lastSeq = new Map<string, number>(); // event_id -> the highest seq relayed to an app
const ownerOf = new Map<string, string>(); // event_id -> the app_id whose connection got its accepted

const RESUME_FAULTS = {
  /** RES-004: a resume gets the event's fragments from the first again, whatever its after_seq. */
  'resume-repeats-fragments': {
    toBridge: (frame, link) =>
      link.endpoint === 'app' && frame.type === 'resume' ? { ...frame, after_seq: 0 } : undefined,
  },
  /** RES-001: tokens carry seq on a connection that did not ask for the extension. */
  'seq-to-non-opted': {
    toClient: (frame, link) =>
      link.endpoint === 'app' && !link.resumable && frame.type === 'token' ? { ...frame, seq: 1 } : undefined,
  },
  /** RES-002: every event of an app gets the resume token of its first one. */
  'resume-token-per-app': {
    toClient(frame, link) {
      if (link.endpoint !== 'app' || frame.type !== 'accepted' || typeof frame.resume_token !== 'string')
        return undefined;
      if (!firstTokenOfApp.has(link.ownerId!)) firstTokenOfApp.set(link.ownerId!, frame.resume_token);
      return { ...frame, resume_token: firstTokenOfApp.get(link.ownerId!) };
    },
  },
  /** RES-007: any connection of the app may take an event back: the resume token is not checked. */
  'resume-token-unchecked': {
    toClient(frame, link) {
      if (link.endpoint === 'app' && frame.type === 'accepted' && typeof frame.resume_token === 'string')
        resumeTokens.set(String(frame.event_id), frame.resume_token);
      return undefined;
    },
    toBridge(frame, link) {
      const real = resumeTokens.get(String(frame.event_id));
      return link.endpoint === 'app' && frame.type === 'resume' && real ? { ...frame, resume_token: real } : undefined;
    },
  },
  /** RES-008: an after_seq beyond the fragments sent is taken as "all of them" instead of refused. */
  'after-seq-ahead-accepted': {
    toClient(frame, link) {
      if (link.endpoint === 'app' && frame.type === 'token' && typeof frame.seq === 'number')
        lastSeq.set(String(frame.event_id), Math.max(frame.seq, lastSeq.get(String(frame.event_id)) ?? 0));
      return undefined;
    },
    toBridge(frame, link) {
      const sent = lastSeq.get(String(frame.event_id)) ?? 0;
      return link.endpoint === 'app' && frame.type === 'resume' && Number(frame.after_seq) > sent
        ? { ...frame, after_seq: sent }
        : undefined;
    },
  },
  /** RES-013: another app's event is named as such (refused, as if it were the app's own with a wrong token), not answered as unknown. */
  'other-app-named': {
    toClient(frame, link) {
      if (link.endpoint !== 'app') return undefined;
      if (frame.type === 'accepted') ownerOf.set(String(frame.event_id), link.ownerId!);
      const owner = ownerOf.get(String(frame.event_id));
      if (frame.type !== 'error' || frame.code !== 'RESUME_GAP' || owner === undefined || owner === link.ownerId)
        return undefined;
      return {
        ...frame,
        code: 'RESUME_REFUSED',
        error: `This connection cannot resume event ${String(frame.event_id)}: the resume token does not match.`,
      };
    },
  },
  /** RES-011: an event the bridge no longer keeps is refused (as if the app erred) instead of a gap. */
  'gap-as-refused': {
    toClient: (frame, link) =>
      link.endpoint === 'app' && frame.type === 'error' && frame.code === 'RESUME_GAP'
        ? { ...frame, code: 'RESUME_REFUSED' }
        : undefined,
  },
} satisfies Record<string, Fault>;

/** Faults of the cancel extension (S1-S4), each breaking one rule of it. */
const cancelledBy = new Map<string, Link>(); // event_id -> the app connection that cancelled it
const acceptedFor = new Map<string, string>(); // event_id -> the app_id whose connection got its accepted

const CANCEL_FAULTS = {
  /** CAN-002: an agent that opted in is never told of a cancel. */
  'cancel-not-told': {
    toClient: (frame, link) => (link.endpoint === 'agent' && frame.type === 'cancel' ? null : undefined),
  },
  /** CAN-003: every agent connection is told of a cancel, opted in or not. */
  'cancel-to-non-opted': {
    toBridge(frame, link, links) {
      if (link.endpoint !== 'app' || frame.type !== 'cancel') return undefined;
      for (const other of links)
        if (other.endpoint === 'agent' && !other.cancellable)
          other.sendToClient({ type: 'cancel', event_id: frame.event_id });
      return undefined;
    },
  },
  /** CAN-004: the agent's fragments after a cancel still reach the app that cancelled. */
  'cancel-late-forwarded': {
    toBridge(frame, link) {
      if (link.endpoint === 'app' && frame.type === 'cancel') cancelledBy.set(String(frame.event_id), link);
      const app = cancelledBy.get(String(frame.event_id));
      if (link.endpoint === 'agent' && frame.type === 'token' && app)
        app.sendToClient({ type: 'token', event_id: frame.event_id, agent_id: link.ownerId, token: frame.token });
      return undefined;
    },
  },
  /** CAN-005: a cancel of another app's live event is told apart from one of an unknown event. */
  'cancel-refusal-tells-apart': {
    toClient(frame, link) {
      if (link.endpoint !== 'app') return undefined;
      if (frame.type === 'accepted') acceptedFor.set(String(frame.event_id), link.ownerId!);
      const owner = acceptedFor.get(String(frame.event_id));
      if (frame.type !== 'error' || frame.code !== 'CANCEL_REFUSED' || owner === undefined || owner === link.ownerId)
        return undefined;
      return { ...frame, code: 'PERMISSION_DENIED', error: `Event ${String(frame.event_id)} is another app's.` };
    },
  },
} satisfies Record<string, Fault>;

let fakeIds = 0;
/** An event id of the proxy's own, in the bridge's format (26 characters), unique within the process. */
const fakeEventId = () => `01PROXY${String(++fakeIds).padStart(19, '0')}`;

export const FAULTS = {
  /** FLOW-003: tokens reach the app without the agent_id the bridge must add. */
  'token-without-agent-id': {
    toClient(frame, link) {
      if (link.endpoint !== 'app' || frame.type !== 'token') return undefined;
      const { agent_id: _dropped, ...rest } = frame;
      return rest;
    },
  },
  /** FLOW-002: the agent gets the stored session key svc:{agent_id}:{app_id}:{thread_id}, not svc:{app_id}:{thread_id}. */
  'agent-session-key-with-agent-id': {
    toClient(frame, link) {
      if (link.endpoint !== 'agent' || frame.type !== 'event') return undefined;
      return { ...frame, session_key: `svc:${link.ownerId}:${String(frame.app_id)}:${String(frame.thread_id)}` };
    },
  },
  /** ERR-004: a payload of exactly 64000 bytes of compact JSON is refused as too large (the limit is inclusive). */
  'payload-limit-off-by-one': {
    toBridge(frame, link) {
      if (link.endpoint !== 'app' || frame.type !== 'event') return undefined;
      if (Buffer.byteLength(JSON.stringify(frame.payload ?? null), 'utf8') !== LIMITS.payloadMaxBytes) return undefined;
      link.sendToClient({
        type: 'error',
        event_id: fakeEventId(),
        ...(typeof frame.agent_id === 'string' ? { agent_id: frame.agent_id } : {}),
        code: 'PAYLOAD_TOO_LARGE',
        error: 'Payload is 64000 bytes of JSON; the limit is 64000.',
      });
      return null;
    },
  },
  /** FLOW-008: a reply goes to every connection of the app, not only to the instance that sent the event. */
  'reply-to-every-instance': {
    toClient(frame, link, links) {
      if (link.endpoint !== 'app' || frame.type !== 'reply') return undefined;
      for (const other of links)
        if (other !== link && other.endpoint === 'app' && other.ownerId === link.ownerId) other.sendToClient(frame);
      return undefined;
    },
  },
  /** HB-001: pings on the app endpoint go unanswered. */
  'no-pong': {
    toClient: (frame, link) => (link.endpoint === 'app' && frame.type === 'pong' ? null : undefined),
  },
  /** AUTH-004, AUTH-005: the wrong endpoint is reported as a bad token (UNAUTHORIZED, 4401) instead of FORBIDDEN (4403). */
  'forbidden-as-unauthorized': {
    toClient: (frame) =>
      frame.type === 'error' && frame.code === 'FORBIDDEN' ? { ...frame, code: 'UNAUTHORIZED' } : undefined,
    close: (code, reason) =>
      code === CLOSE_CODES.FORBIDDEN ? { code: CLOSE_CODES.UNAUTHORIZED, reason: 'UNAUTHORIZED' } : { code, reason },
  },
  /** AUTH-008: connection errors close with the right code but an empty reason (the reason must be the error code). */
  'close-without-reason': {
    close: (code, reason) => ({ code, reason: code >= 4000 ? '' : reason }),
  },
  /** ERR-008: RATE_LIMIT_EXCEEDED comes without metadata.retry_after_seconds, so the app cannot tell when to retry. */
  'retry-after-missing': {
    toClient(frame, link) {
      if (link.endpoint !== 'app' || frame.type !== 'error' || frame.code !== 'RATE_LIMIT_EXCEEDED') return undefined;
      const { metadata: _dropped, ...rest } = frame;
      return rest;
    },
  },
  ...RESUME_FAULTS,
  ...CANCEL_FAULTS,
} satisfies Record<string, Fault>;

export type FaultName = keyof typeof FAULTS;

export interface FaultProxy {
  /** `http://127.0.0.1:PORT`: the proxy's HTTP base (admin API, directory, test clock). */
  url: string;
  /** `ws://127.0.0.1:PORT`: append `/v1` for the protocol's base URL. */
  wsUrl: string;
  close(): Promise<void>;
}

const ENDPOINTS: Record<string, ClientKind> = Object.fromEntries(
  Object.entries(ENDPOINT_PATHS).map(([kind, path]) => [path, kind as ClientKind]),
);

function tokenOf(req: IncomingMessage, url: URL): string | undefined {
  const header = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
  return header?.[1] ?? url.searchParams.get('token') ?? undefined;
}

/** Closes `ws` with a code and reason received from the other side (1005 and 1006 cannot be sent, only mirrored). */
function closeLike(ws: WebSocket, code: number, reason: string): void {
  if (ws.readyState === WebSocket.CLOSED || ws.readyState === WebSocket.CLOSING) return;
  if (code === 1006) ws.terminate();
  else if (code === 1005) ws.close();
  else ws.close(code, reason);
}

/** Starts a proxy to the bridge at `upstream` (`http://host:port`), applying `fault` if given. */
export async function startFaultProxy(upstream: string, fault?: FaultName): Promise<FaultProxy> {
  const rules: Fault = fault ? FAULTS[fault] : {};
  const target = new URL(upstream);
  const links = new Set<Link>();
  const sockets = new Set<WebSocket>();
  const wss = new WebSocketServer({ noServer: true, maxPayload: 0, perMessageDeflate: false });

  const server: Server = createServer((req, res) => {
    const forwarded = request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: target.host },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forwarded.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(forwarded);
  });

  /** Relays one frame through a rule: untouched frames keep their bytes. */
  const relay = (rule: FrameRule | undefined, link: Link, to: WebSocket, data: RawData, isBinary: boolean) => {
    let changed: Frame | null | undefined;
    if (rule && !isBinary) {
      let frame: unknown;
      try {
        frame = JSON.parse(data.toString());
      } catch {
        // not JSON: relayed as it is
      }
      if (frame && typeof frame === 'object' && !Array.isArray(frame)) changed = rule(frame as Frame, link, links);
    }
    if (changed === null || to.readyState !== WebSocket.OPEN) return;
    if (changed === undefined) to.send(isBinary ? data : data.toString(), { binary: isBinary });
    else to.send(JSON.stringify(changed));
  };

  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://proxy');
    const endpoint = ENDPOINTS[url.pathname];
    if (!endpoint) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const token = tokenOf(req, url);
    const resumable = url.searchParams.get('resume') === '1';
    const cancellable = url.searchParams.get('cancel') === '1';
    const upstreamUrl = `${target.protocol === 'https:' ? 'wss' : 'ws'}://${target.host}${url.pathname}${url.search}`;
    const bridgeWs = new WebSocket(upstreamUrl, {
      headers: req.headers.authorization ? { authorization: req.headers.authorization } : {},
      maxPayload: 0,
      perMessageDeflate: false,
    });
    sockets.add(bridgeWs);
    let client: WebSocket | undefined;
    const early: [RawData, boolean][] = [];
    let earlyClose: { code: number; reason: string } | undefined;
    let upgrading = false;
    const link: Link = {
      endpoint,
      token,
      ownerId: token?.split('_')[1],
      resumable,
      cancellable,
      sendToClient(frame) {
        if (client?.readyState === WebSocket.OPEN) client.send(JSON.stringify(frame));
      },
    };
    const closeClient = (code: number, reason: string) => {
      const out = rules.close ? rules.close(code, reason, link) : { code, reason };
      if (client) closeLike(client, out.code, out.reason);
    };

    bridgeWs.on('message', (data, isBinary) => {
      if (client) relay(rules.toClient, link, client, data, isBinary);
      else early.push([data, isBinary]);
    });
    bridgeWs.on('close', (code, reason) => {
      sockets.delete(bridgeWs);
      if (client) closeClient(code, reason.toString());
      else if (upgrading) earlyClose = { code, reason: reason.toString() };
      else if (socket.writable)
        socket.end('HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    });
    bridgeWs.on('error', () => undefined); // a close follows
    bridgeWs.on('unexpected-response', (_req, res) => {
      // The bridge refused the upgrade over HTTP (404, 503): the client gets the same status.
      socket.end(
        `HTTP/1.1 ${res.statusCode ?? 502} ${res.statusMessage ?? ''}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`,
      );
      res.resume();
      bridgeWs.terminate();
    });
    bridgeWs.on('open', () => {
      upgrading = true;
      wss.handleUpgrade(req, socket, head, (ws) => {
        client = ws;
        sockets.add(ws);
        links.add(link);
        ws.on('message', (data, isBinary) => relay(rules.toBridge, link, bridgeWs, data, isBinary));
        ws.on('close', (code, reason) => {
          links.delete(link);
          sockets.delete(ws);
          closeLike(bridgeWs, code, reason.toString());
        });
        ws.on('error', () => undefined);
        for (const [data, isBinary] of early.splice(0)) relay(rules.toClient, link, ws, data, isBinary);
        if (earlyClose) closeClient(earlyClose.code, earlyClose.reason);
      });
    });
    socket.on('error', () => undefined); // a close follows
    socket.on('close', () => {
      if (!client) bridgeWs.terminate(); // the client left before the bridge answered
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    wsUrl: `ws://127.0.0.1:${port}`,
    async close() {
      for (const ws of sockets) ws.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
