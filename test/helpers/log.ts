// A pino logger whose JSON lines a test reads back (what the bridge logged, and that no secret is in it).
import { Writable } from 'node:stream';
import { pino } from 'pino';

export function capturedLog(level: pino.Level = 'info'): { log: pino.Logger; lines: () => any[] } {
  const lines: any[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { log: pino({ level, base: undefined }, sink), lines: () => lines };
}
