// Listening on a port, with a failure put in one line that names the settings to change (O11).
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isListenError, ListenFailure, listenFailure } from '../shared/listen-error.js';

/** Listens, or rejects with the failure in one line naming the settings to change (O11). */
export async function listen(server: Server, port: number, host: string, settings: string): Promise<number> {
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    throw isListenError(err) ? new ListenFailure(listenFailure(err, host, port, settings), err) : err;
  }
  return (server.address() as AddressInfo).port;
}

/** A URL for `host` as a client on this machine can use it: 0.0.0.0 is every interface, reached on 127.0.0.1. */
export function baseUrl(scheme: string, host: string, port: number): string {
  const shown = host.includes(':') ? `[${host}]` : host;
  return `${scheme}://${shown === '0.0.0.0' ? '127.0.0.1' : shown}:${port}`;
}
