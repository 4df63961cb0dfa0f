// The log as an operator reads it: one JSON object a line where a machine reads stdout (the default when stdout is
// not a terminal), readable lines with LOG_FORMAT=pretty (the default on a terminal), and a misspelt setting warned.
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '../helpers/eventually.js';
import { startBridgeProcess, stopBridgeProcesses } from '../helpers/process.js';

describe('the log format', function () {
  this.timeout(30_000);
  let dir: string;
  beforeEach(() => void (dir = mkdtempSync(join(tmpdir(), 'bridge-log-format-'))));
  afterEach(async function () {
    await stopBridgeProcesses();
    rmSync(dir, { recursive: true, force: true });
  });

  const start = (env: Record<string, string>) =>
    startBridgeProcess({ DATABASE_URL: `sqlite:${join(dir, 'b.sqlite')}`, LOG_LEVEL: 'info', ...env });
  const firstLines = (out: string) => out.split('\n').filter(Boolean).slice(0, 3);

  it('is JSON, a line each, when stdout is not a terminal and LOG_FORMAT is not set', async function () {
    const proc = await start({});
    const lines = await eventually(
      'a log line',
      () => firstLines(proc.stdout()),
      (l) => l.length > 0,
    );
    for (const line of lines) expect(JSON.parse(line)).to.have.property('msg');
  });

  it('is readable with LOG_FORMAT=pretty: level, time and message on one line, fields below; no JSON line', async function () {
    const proc = await start({ LOG_FORMAT: 'pretty', ADMIN_TOKN: 'x' });
    const out = await eventually(
      'the warning',
      () => proc.stdout(),
      (o) => o.includes('ADMIN_TOKN'),
    );
    const warning = out.split('\n').find((l) => l.includes('ADMIN_TOKN'))!;
    expect(warning).to.match(
      /^\[\d\d:\d\d:\d\d\.\d{3}\] WARN: ADMIN_TOKN is not a setting of the bridge: ignored; did you mean ADMIN_TOKEN\?/,
    );
    for (const line of firstLines(out)) expect(() => JSON.parse(line)).to.throw();
  });
});
