import { expect } from 'chai';
import type { Logger } from '../../src/shared/logger.js';
import { Services, type Service } from '../../src/server/services.js';

/** A logger that keeps its error lines. */
function errorLog(): Logger & { errors: Array<{ fields: object; message: string }> } {
  const errors: Array<{ fields: object; message: string }> = [];
  const nothing = () => {};
  return {
    debug: nothing,
    info: nothing,
    warn: nothing,
    error: (fields, message) => errors.push({ fields, message }),
    errors,
  };
}

/** A service that writes `start name` and `stop name` to `steps`, after a turn of the event loop when `slow`. */
function recorded(
  steps: string[],
  name: string,
  options: { slow?: boolean; failStart?: boolean; failStop?: boolean } = {},
): Service<string> {
  const turn = () => (options.slow ? new Promise((resolve) => setImmediate(resolve)) : undefined);
  return {
    name,
    async start() {
      await turn();
      if (options.failStart) throw new Error(`${name} did not start`);
      steps.push(`start ${name}`);
      return `${name} started`;
    },
    async stop(started) {
      await turn();
      if (options.failStop) throw new Error(`${name} did not stop`);
      steps.push(`stop ${name} (${started})`);
    },
  };
}

describe('Services', function () {
  it('starts each service when added, hands its value on, and stops them in the reverse order', async function () {
    const steps: string[] = [];
    const services = new Services(errorLog());
    expect(await services.add(recorded(steps, 'database', { slow: true }))).to.equal('database started');
    await services.add(recorded(steps, 'event log'));
    await services.add({ name: 'registrations', start: () => steps.push('start registrations') }); // no stop
    await services.add(recorded(steps, 'listening', { slow: true }));
    await services.stop();
    expect(steps).to.deep.equal([
      'start database',
      'start event log',
      'start registrations',
      'start listening',
      'stop listening (listening started)',
      'stop event log (event log started)',
      'stop database (database started)',
    ]);
  });

  it('waits for each stop before the next: an asynchronous one is done before the service added before it stops', async function () {
    const steps: string[] = [];
    const services = new Services(errorLog());
    await services.add({ name: 'first', start: () => undefined, stop: () => void steps.push('first stopped') });
    await services.add({
      name: 'second',
      start: () => undefined,
      stop: () => new Promise<void>((resolve) => setTimeout(() => resolve(void steps.push('second stopped')), 20)),
    });
    await services.stop();
    expect(steps).to.deep.equal(['second stopped', 'first stopped']);
  });

  it('stops the rest when one stop fails, logs it by name, and then rejects with that failure', async function () {
    const steps: string[] = [];
    const log = errorLog();
    const services = new Services(log);
    await services.add(recorded(steps, 'lock'));
    await services.add(recorded(steps, 'database', { failStop: true }));
    await services.add(recorded(steps, 'server'));
    let failure: unknown;
    await services.stop().catch((err) => (failure = err));
    expect(steps.filter((s) => s.startsWith('stop'))).to.deep.equal([
      'stop server (server started)',
      'stop lock (lock started)',
    ]);
    expect((failure as Error).message).to.equal('database did not stop');
    expect(log.errors).to.have.length(1);
    expect(log.errors[0]!.fields).to.include({ service: 'database' });
    expect(log.errors[0]!.message).to.equal('stopping database failed');
  });

  it('on a start that fails, stops those already started (last first) and throws the start error, not a stop error', async function () {
    const steps: string[] = [];
    const log = errorLog();
    const services = new Services(log);
    await services.add(recorded(steps, 'lock'));
    await services.add(recorded(steps, 'database', { failStop: true }));
    await services.add(recorded(steps, 'timers', { slow: true }));
    let failure: unknown;
    await services.add(recorded(steps, 'listening', { failStart: true, slow: true })).catch((err) => (failure = err));
    expect((failure as Error).message).to.equal('listening did not start');
    expect(steps).to.deep.equal([
      'start lock',
      'start database',
      'start timers',
      'stop timers (timers started)',
      'stop lock (lock started)',
    ]);
    expect(log.errors.map((e) => e.message)).to.deep.equal(['stopping database failed']);
  });

  it('stops each service once: a second stop, or one after a failed start, stops nothing more', async function () {
    const steps: string[] = [];
    const services = new Services(errorLog());
    await services.add(recorded(steps, 'database'));
    await services.add(recorded(steps, 'listening', { failStart: true })).catch(() => undefined);
    await services.stop();
    await services.stop();
    expect(steps).to.deep.equal(['start database', 'stop database (database started)']);
  });
});
