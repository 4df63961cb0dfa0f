// The bridge's parts as services started in dependency order and stopped in the reverse, so that the shutdown order
// follows from the start order instead of being written out by hand (fastify's plugins and their onClose hooks).
// A part whose shutdown has an early and a late step is two services, each added where its step falls.
import type { Logger } from '../shared/logger.js';

export interface Service<T = void> {
  /** Named in the log when its stop fails. */
  readonly name: string;
  /** Starts it once those added before it have started; what it returns is what the services after it use. */
  start(): T | Promise<T>;
  /** Undoes the start, once every service added after it has stopped. */
  stop?(started: T): unknown;
}

interface Started {
  name: string;
  stop(): unknown;
}

export class Services {
  private readonly started: Started[] = [];

  constructor(private readonly log: Logger) {}

  /**
   * Starts `service` now, after those added before it. A start that fails stops the services already started
   * (last first) before its error is thrown: a bridge that failed to start keeps no port, timer, database or lock.
   */
  async add<T>(service: Service<T>): Promise<T> {
    let value: T;
    try {
      value = await service.start();
    } catch (err) {
      await this.stop().catch(() => undefined); // each failure is logged; the start's error is the one to throw
      throw err;
    }
    this.started.push({ name: service.name, stop: () => service.stop?.(value) });
    this.log.debug({ service: service.name }, 'started');
    return value;
  }

  /**
   * Stops every started service, the last added first. One that fails is logged and the rest still stop; then the
   * first failure is thrown, so the caller knows the shutdown was not clean.
   */
  async stop(): Promise<void> {
    let failure: { err: unknown } | undefined;
    for (const service of this.started.splice(0).reverse()) {
      try {
        await service.stop();
        this.log.debug({ service: service.name }, 'stopped');
      } catch (err) {
        this.log.error({ err, service: service.name }, `stopping ${service.name} failed`);
        failure ??= { err };
      }
    }
    if (failure) throw failure.err;
  }
}
