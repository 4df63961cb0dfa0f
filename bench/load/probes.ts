// The abuse scenario's look at the bridge's door, from the canary's process: /healthz and /readyz each on a new TCP
// connection (a kept-alive one would be answered however full the bridge's accept queue is), and a new app and a new
// agent WebSocket connection, as a client arriving during the attack would open them. Each outcome is counted under
// the phase (quiet, attack, after) in which the probe started.
import { request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { WebSocket } from 'ws';
import { ENDPOINT_PATHS, type ClientKind } from '../../generated/index.js';

export interface ProbeConfig {
  /** `ws://host:port` of the bridge; its HTTP endpoints are on the same port. */
  url: string;
  /** Credentials of their own (another agent connection would replace the canary's agent). */
  app: { token: string };
  agent: { token: string };
  localAddress: string;
}

/** Outcome -> count: `200`, `503`, `timeout`, `error ECONNRESET`; for connections `open`, `http 503`, `close 4xxx`. */
export type Outcomes = Record<string, number>;

export interface ProbeCounts {
  healthz: Outcomes;
  readyz: Outcomes;
  new_app: Outcomes;
  new_agent: Outcomes;
}

/** A probe with no answer within this time counts as a timeout. */
const TIMEOUT_MS = 2000;
/** A new connection counts as served if it is still open this long after its handshake (a refusal closes at once). */
const SETTLE_MS = 200;

const emptyCounts = (): ProbeCounts => ({ healthz: {}, readyz: {}, new_app: {}, new_agent: {} });
const bump = (m: Outcomes, k: string) => void (m[k] = (m[k] ?? 0) + 1);
const errCode = (err: Error) => `error ${(err as NodeJS.ErrnoException).code ?? err.message.slice(0, 40)}`;

function httpProbe(cfg: ProbeConfig, path: string): Promise<string> {
  const { hostname, port } = new URL(cfg.url);
  return new Promise((resolve) => {
    let done = false;
    const finish = (outcome: string) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      req.destroy();
      resolve(outcome);
    };
    const req = request({ host: hostname, port, path, agent: false, localAddress: cfg.localAddress }, (res) => {
      res.resume();
      res.once('end', () => finish(String(res.statusCode)));
      res.once('error', (err) => finish(errCode(err)));
    });
    const timer = setTimeout(() => finish('timeout'), TIMEOUT_MS);
    req.once('error', (err) => finish(errCode(err)));
    req.end();
  });
}

function connectionProbe(cfg: ProbeConfig, kind: ClientKind): Promise<string> {
  return new Promise((resolve) => {
    let done = false;
    const ws = new WebSocket(`${cfg.url}${ENDPOINT_PATHS[kind]}`, {
      headers: { authorization: `Bearer ${kind === 'app' ? cfg.app.token : cfg.agent.token}` },
      localAddress: cfg.localAddress,
      perMessageDeflate: false,
    });
    const finish = (outcome: string) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      ws.terminate();
      resolve(outcome);
    };
    const timer = setTimeout(() => finish('timeout'), TIMEOUT_MS);
    ws.on('unexpected-response', (_req, res) => {
      res.resume();
      finish(`http ${res.statusCode}`);
    });
    ws.on('error', (err) => finish(errCode(err)));
    ws.on('close', (code) => finish(`close ${code}`));
    ws.on('open', () =>
      setTimeout(() => finish(ws.readyState === WebSocket.OPEN ? 'open' : `close ${ws.readyState}`), SETTLE_MS),
    );
  });
}

/** Probes until stopped: HTTP every 500 ms, connections every second, each loop one probe at a time. */
export function startProbes(cfg: ProbeConfig, phase: () => string) {
  const byPhase: Record<string, ProbeCounts> = {};
  const counts = () => (byPhase[phase()] ??= emptyCounts());
  let running = true;
  const loop = async (probe: () => Promise<void>, everyMs: number) => {
    while (running) {
      const t = performance.now();
      await probe();
      await sleep(Math.max(0, everyMs - (performance.now() - t)));
    }
  };
  const count = (which: keyof ProbeCounts, outcome: Promise<string>) => {
    const c = counts();
    return outcome.then((o) => bump(c[which], o));
  };
  const loops = [
    loop(async () => {
      await count('healthz', httpProbe(cfg, '/healthz'));
      await count('readyz', httpProbe(cfg, '/readyz'));
    }, 500),
    loop(async () => {
      await count('new_app', connectionProbe(cfg, 'app'));
      await count('new_agent', connectionProbe(cfg, 'agent'));
    }, 1000),
  ];
  return {
    async stop(): Promise<Record<string, ProbeCounts>> {
      running = false;
      await Promise.all(loops);
      return byPhase;
    },
  };
}
