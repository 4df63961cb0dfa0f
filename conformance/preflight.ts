// Before any scenario: is each URL a bridge's base URL, can the suite provision, does the target have a test clock?
// A problem here is one clear error and exit 2; no scenario runs and the target is not blamed.
import WebSocket from 'ws';
import { NotSupported, ProvisionError, type Provisioner } from './provision/provisioner.js';

export class PreflightError extends Error {}

/** The URL must be ws[s]://host[:port]/…/v1 (the protocol's base URL ends in its version segment). */
export function checkUrl(url: string): URL {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new PreflightError(`--url ${url} is not a URL; it should look like ws://127.0.0.1:8080/v1`);
  }
  if (u.protocol !== 'ws:' && u.protocol !== 'wss:')
    throw new PreflightError(`--url ${url} must be a ws:// or wss:// URL, e.g. ws://${u.host || '127.0.0.1:8080'}/v1`);
  if (!/\/v1\/?$/.test(u.pathname)) {
    const suggestion = `${u.protocol}//${u.host}${u.pathname.replace(/\/$/, '')}/v1`;
    throw new PreflightError(
      `--url ${url} does not end in /v1, the protocol's version segment: did you mean ${suggestion}?`,
    );
  }
  return u;
}

/** Opens {url}/ws/app with no token: any completed upgrade or refusal other than 404 means an endpoint is there. */
export function probeEndpoint(url: string, timeoutMs: number): Promise<void> {
  const endpoint = `${url.replace(/\/$/, '')}/ws/app`;
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(endpoint, { handshakeTimeout: timeoutMs, perMessageDeflate: false });
    const fail = (why: string) => {
      ws.terminate();
      reject(new PreflightError(`no bridge at ${endpoint}: ${why}`));
    };
    ws.once('open', () => {
      ws.terminate();
      resolve();
    });
    ws.once('unexpected-response', (_req, res) => {
      ws.terminate();
      if (res.statusCode === 404) fail(`HTTP 404 (is the base URL right? it must end in /v1)`);
      else resolve();
    });
    ws.once('error', (err) => fail(err.message));
  });
}

/** Probes every node at once; the error names each node that did not answer (with one node: exactly its probe's). */
export async function probeNodes(nodes: readonly string[], timeoutMs: number): Promise<void> {
  const probes = await Promise.allSettled(nodes.map((url) => probeEndpoint(url, timeoutMs)));
  const silent = probes.flatMap((p, i) => (p.status === 'rejected' ? [{ i, why: (p.reason as Error).message }] : []));
  if (!silent.length) return;
  if (nodes.length === 1) throw new PreflightError(silent[0]!.why);
  throw new PreflightError(
    silent.map(({ i, why }) => `node ${i + 1} of ${nodes.length} (${nodes[i]}): ${why}`).join('; '),
  );
}

/** Proves the admin token or the provisioning command works. */
export async function checkProvisioner(p: Provisioner): Promise<void> {
  try {
    await p.check();
  } catch (err) {
    if (err instanceof ProvisionError || err instanceof NotSupported)
      throw new PreflightError(`cannot provision through the ${p.description}: ${err.message}`);
    throw err;
  }
}
