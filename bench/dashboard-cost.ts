// What an open dashboard costs the bridge: CPU time and bytes per second for each page left open on a view, measured
// from outside (the bridge process's CPU time in /proc, the bytes through a counting proxy between Chromium and it),
// against the same bridge with no page open. An app and an agent exchange a few events a second meanwhile, so the
// views have something to show.
//
//   npx tsx bench/dashboard-cost.ts [--pages 1,10] [--seconds 60] [--warmup 10] [--views overview,org,events]
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, connect, type Server as NetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Browser, BrowserContext } from 'playwright-core';
import WebSocket from 'ws';
import { ENDPOINT_PATHS } from '../generated/index.js';
import { launchChromium } from '../test/dashboard/browser.js';
import { ADMIN_TOKEN, provision, shutdown, startBridge } from './processes.js';

const { values } = parseArgs({
  options: {
    pages: { type: 'string', default: '1,10' },
    seconds: { type: 'string', default: '60' },
    warmup: { type: 'string', default: '10' },
    views: { type: 'string', default: 'overview,org,events' },
  },
});
const PAGE_COUNTS = values.pages.split(',').map(Number);
const SECONDS = Number(values.seconds);
const WARMUP = Number(values.warmup);
const VIEWS = values.views.split(',');
const TICKS_PER_SECOND = 100; // USER_HZ on Linux

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** utime + stime of a process, in milliseconds. */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

/** A TCP proxy that counts the bytes each way, so that what the browser and the bridge exchange is measured whole. */
async function countingProxy(
  port: number,
): Promise<{ port: number; bytes: { down: number; up: number }; close(): void }> {
  const bytes = { down: 0, up: 0 };
  const server: NetServer = createServer((client) => {
    const upstream = connect(port, '127.0.0.1');
    client.on('data', (b) => (bytes.up += b.length));
    upstream.on('data', (b) => (bytes.down += b.length));
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as { port: number }).port, bytes, close: () => server.close() };
}

/** An agent that answers every event with three fragments and a reply, and an app that sends `perSecond` events. */
async function traffic(
  wsUrl: string,
  app: { token: string },
  agent: { agent_id: string; token: string },
  perSecond: number,
) {
  const open = (path: string, token: string) =>
    new Promise<WebSocket>((resolve, reject) => {
      const ws = new WebSocket(`${wsUrl}${path}`, { headers: { authorization: `Bearer ${token}` } });
      ws.once('open', () => resolve(ws));
      ws.once('error', reject);
    });
  const agentWs = await open(ENDPOINT_PATHS.agent, agent.token);
  agentWs.on('message', (data) => {
    const frame = JSON.parse(String(data));
    if (frame.type !== 'event') return;
    for (const token of ['one ', 'two ', 'three'])
      agentWs.send(JSON.stringify({ type: 'token', event_id: frame.event_id, token }));
    agentWs.send(JSON.stringify({ type: 'reply', event_id: frame.event_id, content: '', done: true }));
  });
  const appWs = await open(ENDPOINT_PATHS.app, app.token);
  let n = 0;
  const timer = setInterval(
    () =>
      appWs.send(
        JSON.stringify({ type: 'event', agent_id: agent.agent_id, thread_id: `t${n++ % 10}`, payload: { text: 'hi' } }),
      ),
    1000 / perSecond,
  );
  return () => {
    clearInterval(timer);
    appWs.close();
    agentWs.close();
  };
}

async function openPage(browser: Browser, base: string, hash: string): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width: 1366, height: 800 } });
  const page = await context.newPage();
  await page.goto(`${base}/dashboard`);
  await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation').waitFor();
  await page.goto(`${base}/dashboard${hash}`);
  await page.locator('h1').first().waitFor();
  if (hash.startsWith('#/events')) await page.getByRole('button', { name: 'Live' }).click(); // the tail is off until asked for
  return context;
}

async function measure(pid: number, bytes: { down: number; up: number }) {
  const cpu0 = cpuMs(pid);
  const down0 = bytes.down;
  const up0 = bytes.up;
  await sleep(SECONDS * 1000);
  return {
    cpuMsPerS: (cpuMs(pid) - cpu0) / SECONDS,
    downPerS: (bytes.down - down0) / SECONDS,
    upPerS: (bytes.up - up0) / SECONDS,
  };
}

const dir = mkdtempSync(join(tmpdir(), 'bench-dashboard-'));
const bridge = await startBridge(dir);
const proxy = await countingProxy(bridge.port);
const base = `http://127.0.0.1:${proxy.port}`;
const creds = await provision(bridge.admin, 1, 1);
const orgId = (await bridge.admin.organizations()).organizations[0]!.org_id;
const stopTraffic = await traffic(`ws://127.0.0.1:${bridge.port}`, creds.apps[0]!, creds.agents[0]!, 5);
const browser = await launchChromium();
const hashes: Record<string, string> = { overview: '#/overview', org: `#/orgs/${orgId}`, events: '#/events' };
try {
  await sleep(WARMUP * 1000);
  console.log(
    `bridge CPU in ms per second of wall time; each row against a stretch of ${SECONDS} s with no page open just before it`,
  );
  console.log('view      pages  no page  with pages  +CPU ms/s per page  bytes/s down per page  bytes/s up per page');
  for (const view of VIEWS) {
    for (const count of PAGE_COUNTS) {
      // The machine's other work drifts: each measurement has its own baseline, taken just before it.
      const idle = await measure(bridge.pid, proxy.bytes);
      const contexts: BrowserContext[] = [];
      for (let i = 0; i < count; i++) contexts.push(await openPage(browser, base, hashes[view]!));
      await sleep(WARMUP * 1000);
      const m = await measure(bridge.pid, proxy.bytes);
      for (const c of contexts) await c.close();
      console.log(
        [
          view.padEnd(9),
          String(count).padStart(5),
          idle.cpuMsPerS.toFixed(2).padStart(7),
          m.cpuMsPerS.toFixed(2).padStart(10),
          ((m.cpuMsPerS - idle.cpuMsPerS) / count).toFixed(2).padStart(19),
          (m.downPerS / count).toFixed(0).padStart(22),
          (m.upPerS / count).toFixed(0).padStart(20),
        ].join('  '),
      );
      await sleep(2000);
    }
  }
} finally {
  await browser.close();
  stopTraffic();
  proxy.close();
  await shutdown(bridge, dir);
}
