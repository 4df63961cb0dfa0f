// The handler API: what an agent runtime implements. A handler module default-exports (or exports `handle`) one
// function that gets each event with its session, and a context to stream tokens and end the event with exactly
// one reply or error.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AgentReplyMetadata, ErrorCode, EventToAgentMessage } from '../../../generated/index.js';
import type { AgentSession } from './sessions.js';

/** One event from the bridge, as the handler sees it. */
export interface AgentEvent {
  /** The agent (of the configuration) this event was sent to. */
  agentId: string;
  eventId: string;
  appId: string;
  threadId: string;
  /** The bridge's session key, `svc:{app_id}:{thread_id}`. */
  sessionKey: string;
  /** The app's opaque payload, as sent. */
  payload: EventToAgentMessage['payload'];
  /** The runtime session of `sessionKey` (new on the first event of a thread and after the TTL). */
  session: AgentSession;
  /** Whether `session` was created for this event. */
  newSession: boolean;
}

/** An agent error code: AGENT_ERROR and AGENT_TIMEOUT mean something to the app (W9); any `^[A-Z][A-Z0-9_]*$` code is allowed. */
export type AgentFailureCode = Extract<ErrorCode, 'AGENT_ERROR' | 'AGENT_TIMEOUT'> | (string & {});

/**
 * What a handler answers with. Every call after the event has ended (replied, failed, timed out, or the connector
 * closing) is ignored and logged, never sent.
 */
export interface AgentContext {
  readonly agentId: string;
  readonly eventId: string;
  /**
   * Aborted when the event ends for any reason (a reply, an error, the handler timeout, the connector closing); when
   * the app cancelled it (S4), with a `CancelledEventError` as its reason, and every later call is ignored.
   */
  readonly signal: AbortSignal;
  /** Whether the event has ended. */
  readonly finished: boolean;
  /** Token fragments sent so far. */
  readonly tokenCount: number;
  /**
   * Sends `text` as it is, as one `token` message, or as several when it is over LIMITS.tokenFragmentMaxBytes
   * UTF-8 bytes (cut between characters, after whitespace where possible). Returns the number of messages sent;
   * `''` sends nothing.
   */
  token(text: string): number;
  /** Sends `text` as fragments of `wordsPerFragment` words (default: the connector's wordsPerFragment, 3), each within the byte limit. Returns the number of messages sent. */
  stream(text: string, wordsPerFragment?: number): number;
  /** Ends the event with `reply`; `content` may be empty (the default) when the text was streamed. */
  reply(content?: string, metadata?: AgentReplyMetadata): void;
  /** Ends the event with `error` (the app gets AGENT_TIMEOUT for AGENT_TIMEOUT, else AGENT_ERROR with `message`). */
  fail(code: AgentFailureCode, message: string): void;
}

/**
 * A handler. It must end the event with `ctx.reply` or `ctx.fail`; otherwise the connector ends it for it, so the
 * app is never left waiting (§7):
 * - it throws or rejects: `error` AGENT_ERROR with the exception's message;
 * - it returns without ending the event: `reply` with empty content if it streamed tokens (the bridge joins them,
 *   W10), else `error` AGENT_ERROR "handler returned without a reply";
 * - it neither ends nor returns within the handler timeout: `error` AGENT_TIMEOUT.
 */
export type AgentHandler = (event: AgentEvent, ctx: AgentContext) => Promise<void> | void;

export class HandlerLoadError extends Error {
  override readonly name = 'HandlerLoadError';
}

const TYPESCRIPT_FILE = /\.[cm]?ts$/i;

/** Why a module did not load, with what to do when it is TypeScript that nothing here can run. */
function loadFailure(file: string, err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const code = (err as { code?: unknown } | null)?.code;
  if (TYPESCRIPT_FILE.test(file) && code === 'ERR_UNKNOWN_FILE_EXTENSION') {
    return `Node.js ${process.version} cannot run TypeScript by itself: install tsx (npm install tsx) or use Node.js 22.18 or later`;
  }
  if (code === 'ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX')
    return `${message} (Node.js only strips types; install tsx (npm install tsx) to run this module)`;
  return message;
}

/**
 * Imports a handler module (path resolved from `cwd`) and returns its handler. A TypeScript module needs tsx's hooks
 * (both its ESM and CommonJS ones for a `.ts` file outside a `"type": "module"` package: registerTypeScriptHooks, as
 * bin/bridge-connector.js does, or `node --import tsx`) or a Node.js that strips types (22.18 or later); with neither
 * this fails with a HandlerLoadError saying so.
 */
export async function loadHandler(modulePath: string, cwd: string = process.cwd()): Promise<AgentHandler> {
  const file = resolve(cwd, modulePath);
  if (!existsSync(file)) throw new HandlerLoadError(`handler module ${modulePath} not found (resolved to ${file})`);
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (err) {
    throw new HandlerLoadError(`cannot load handler module ${file}: ${loadFailure(file, err)}`);
  }
  const fromDefault = mod.default;
  const candidate =
    typeof fromDefault === 'function'
      ? fromDefault
      : typeof mod.handle === 'function'
        ? mod.handle
        : fromDefault && typeof fromDefault === 'object'
          ? ((fromDefault as Record<string, unknown>).default ?? (fromDefault as Record<string, unknown>).handle) // CommonJS interop
          : undefined;
  if (typeof candidate !== 'function') {
    throw new HandlerLoadError(`handler module ${file} exports neither a default function nor a function named handle`);
  }
  return candidate as AgentHandler;
}
