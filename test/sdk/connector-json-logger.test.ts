// bridge-connector's log lines: JSON, one per line, filtered by LOG_LEVEL; an error written as its message and stack,
// and never a token.
import { expect } from 'chai';
import { jsonLogger } from '../../src/sdk/connector/json-logger.js';

const AT = Date.parse('2026-11-22T12:00:00.000Z');
const TOKEN = `rla_tutor-7k2m_${'Zx8kQ2mV'.repeat(5)}`;

function capture(level?: string) {
  const lines: string[] = [];
  const logger = jsonLogger({
    name: 'bridge-connector',
    now: () => AT,
    write: (line) => lines.push(line),
    ...(level !== undefined ? { level } : {}),
  });
  return { logger, lines, parsed: () => lines.map((l) => JSON.parse(l)) };
}

describe('connector JSON-lines logger', function () {
  it('writes level, time, name, the fields and msg as one JSON line', function () {
    const { logger, lines, parsed } = capture();
    logger.info({ agents: ['tutor-7k2m'], health: 'http://127.0.0.1:8787/health' }, 'connector running');
    expect(lines).to.have.length(1);
    expect(lines[0]!.endsWith('}\n')).to.equal(true);
    expect(Object.keys(parsed()[0])).to.deep.equal(['level', 'time', 'name', 'agents', 'health', 'msg']);
    expect(parsed()[0]).to.deep.equal({
      level: 'info',
      time: '2026-11-22T12:00:00.000Z',
      name: 'bridge-connector',
      agents: ['tutor-7k2m'],
      health: 'http://127.0.0.1:8787/health',
      msg: 'connector running',
    });
  });

  it('keeps info and above by default; LOG_LEVEL moves the threshold, and an unknown level is refused', function () {
    const byDefault = capture();
    for (const level of ['debug', 'info', 'warn', 'error'] as const) byDefault.logger[level]({}, level);
    expect(byDefault.parsed().map((l) => l.msg)).to.deep.equal(['info', 'warn', 'error']);
    const debug = capture('debug');
    debug.logger.debug({}, 'shown');
    expect(debug.parsed().map((l) => l.level)).to.deep.equal(['debug']);
    const silent = capture('silent');
    silent.logger.error({}, 'hidden');
    expect(silent.lines).to.deep.equal([]);
    expect(() => capture('verbose')).to.throw(
      RangeError,
      'LOG_LEVEL must be one of trace, debug, info, warn, error, fatal, silent; got verbose',
    );
  });

  it('writes an error as its type, message, code and stack, not its other properties, and never a token', function () {
    const { logger, parsed, lines } = capture();
    const err = Object.assign(new Error(`handshake refused for ${TOKEN}`), {
      code: 'E_REFUSED',
      request: { headers: { authorization: `Bearer ${TOKEN}` } },
    });
    logger.error({ agent_id: 'tutor-7k2m', err }, 'handler failed: boom');
    const [line] = parsed();
    expect(line.err).to.have.keys(['type', 'message', 'code', 'stack']);
    expect(line.err).to.include({
      type: 'Error',
      code: 'E_REFUSED',
      message: 'handshake refused for rla_tutor-7k2m_***',
    });
    expect(line.err.stack).to.match(/^Error: handshake refused for rla_tutor-7k2m_\*\*\*\n\s+at /);
    logger.warn(
      { token: TOKEN, url: `wss://bridge.test/v1/ws/agent?token=${TOKEN}`, err: 'a thrown string' },
      `retrying with ${TOKEN}`,
    );
    expect(parsed()[1]).to.deep.include({
      token: '***',
      url: 'wss://bridge.test/v1/ws/agent?token=rla_tutor-7k2m_***',
      err: { message: 'a thrown string' },
      msg: 'retrying with rla_tutor-7k2m_***',
    });
    expect(lines.join('')).to.not.include(TOKEN.slice(-32));
  });

  it('never loses a line, nor throws, over a field it cannot write', function () {
    const { logger, parsed } = capture();
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    logger.warn({ cycle }, 'still logged');
    expect(parsed()[0]).to.include({ level: 'warn', msg: 'still logged' }).and.have.property('unwritable');
  });
});
