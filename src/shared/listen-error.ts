// A server that cannot listen, in one line a user can act on: Node's own `Error: listen EADDRINUSE` comes with a
// stack trace and does not say which of the process's servers failed (the bridge, the connector's health endpoint).

const REASONS: Record<string, [why: string, fix: string]> = {
  EADDRINUSE: ['the port is already in use by another process', 'stop it or choose another port'],
  EACCES: ['permission denied', 'ports below 1024 need privileges; choose one from 1024'],
  EADDRNOTAVAIL: [
    'that address is not one of this machine',
    'choose one of its addresses, 127.0.0.1 or 0.0.0.0 for all',
  ],
};

/** A listen failure put in one line by `listenFailure`; its errno `code` stays readable for callers in code. */
export class ListenFailure extends Error {
  readonly code: string | undefined;

  constructor(message: string, cause: NodeJS.ErrnoException) {
    super(message, { cause });
    this.code = cause.code;
  }
}

/** Whether `err` is what `server.listen()` rejects with. */
export function isListenError(err: unknown): err is NodeJS.ErrnoException {
  return err instanceof Error && (err as NodeJS.ErrnoException).syscall === 'listen';
}

/** "cannot listen on host:port (`settings`): why (CODE); what to do". */
export function listenFailure(err: NodeJS.ErrnoException, host: string, port: number, settings: string): string {
  const code = err.code ?? 'unknown';
  const [why, fix] = REASONS[code] ?? [err.message, 'check the address and port'];
  return `cannot listen on ${host.includes(':') ? `[${host}]` : host}:${port} (${settings}): ${why} (${code}); ${fix}`;
}
