// What an app's connection sends (W2-W9): each frame parsed and validated, then handled by its type's handler —
// one per type of the generated union, so a message added to the spec does not compile until it is handled here.
import {
  LIMITS,
  validateAgentId,
  validateAppToServiceMessage,
  type AppToServiceMessage,
} from '../../generated/index.js';
import type { Clock } from '../shared/clock.js';
import { errorText } from '../shared/error-text.js';
import type { Admission } from './admission.js';
import type { Cancels } from './cancels.js';
import { compactJson } from './compact-json.js';
import type { Client } from './connections.js';
import type { AppRecord, Directory } from './directory.js';
import { dispatch, type HandlerMap } from './dispatch.js';
import type { FairShares } from './fair-share.js';
import * as frames from './frames.js';
import { utf8Length } from './frames.js';
import { parseInbound } from './inbound.js';
import type { ResumeDesk } from './resume-desk.js';
import { unknownResume } from './resume.js';

export interface AppSideDeps {
  directory: Directory;
  admission: Admission;
  desk: ResumeDesk;
  cancels: Cancels;
  shares: FairShares;
  clock: Clock;
}

/** A frame of an app's connection, and the app it is. */
interface FromApp {
  client: Client;
  app: AppRecord;
}

const truncate = (value: unknown, max: number): string | null =>
  typeof value === 'string' ? [...value].slice(0, max).join('') : null;

export class AppSide {
  private readonly handlers: HandlerMap<AppToServiceMessage, FromApp, Promise<void> | void> = {
    ping: (_, { client }) => {
      client.lastPingAt = this.d.clock.now();
      client.conn.send(frames.PONG);
    },
    discover: (_, { client, app }) => this.discover(client, app),
    event: (message, { client, app }) => this.d.admission.event(client.conn, app, message),
    resume: (message, { client, app }) =>
      client.resumable ? this.d.desk.resume(client.conn, app.app_id, message) : client.conn.send(unknownResume()),
    cancel: (message, { client, app }) => this.d.cancels.cancel(client.conn, app.app_id, message.event_id),
  };

  constructor(private readonly d: AppSideDeps) {}

  /** Returns a promise when the frame's answer takes a round trip: the connection's next frames wait for it. */
  frame(client: Client, app: AppRecord, data: string, isBinary: boolean): Promise<void> | void {
    const parsed = parseInbound(data, isBinary, validateAppToServiceMessage, 'AppToServiceMessage');
    if (parsed.ok) return dispatch(this.handlers, parsed.message, { client, app });
    const { conn } = client;
    if (parsed.type === 'resume' && !client.resumable) return conn.send(unknownResume());
    if (parsed.type !== 'event') return conn.send(frames.appError(parsed.code, parsed.error));
    // An event refused for its fields is still logged, with what could be read of it.
    const { fields } = parsed;
    const payload = fields.payload;
    const start = {
      app_id: app.app_id,
      agent_id: truncate(fields.agent_id, LIMITS.idMaxChars) ?? '',
      thread_id: truncate(fields.thread_id, LIMITS.threadIdMaxChars),
      session_key: null,
      payload_bytes:
        payload && typeof payload === 'object' && !Array.isArray(payload) ? utf8Length(compactJson(payload)) : 0,
      received_at: this.d.clock.now(),
    };
    const agentId = validateAgentId(fields.agent_id) ? fields.agent_id : undefined;
    this.d.admission.reject(conn, parsed.code, parsed.error, start, { agentId });
  }

  /** The agents the app may use (D1), within its organization's share of discovers (F3). */
  private discover(client: Client, app: AppRecord): void {
    const wait = this.d.shares.discover(app.org_id);
    if (wait) {
      const text = errorText('TOO_MANY_REQUESTS', 'discover', { org_id: app.org_id, seconds: wait });
      return client.conn.send(frames.appError('TOO_MANY_REQUESTS', text, { metadata: { retry_after_seconds: wait } }));
    }
    client.conn.send(frames.agents(this.d.directory.usableBy(app)));
  }
}
