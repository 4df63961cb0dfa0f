// The admin API's registry and its effects on what is live: on this node at once, and on every other node before
// the call answers (each change told to them is waited for by `changed()`).
import { Registry } from '../admin/registry.js';
import type { ControlOp } from '../cluster/control.js';
import type { Bridge } from '../core/bridge.js';
import type { Directory } from '../core/directory.js';
import type { SessionTable } from '../core/sessions.js';
import type { Clock } from '../shared/clock.js';
import type { RegistryStore } from '../store/registry.js';
import type { WriteBehind } from '../store/write-behind.js';
import type { ChosenEngine } from './engine.js';
import type { Peers } from './peers.js';
import { dropSessions } from './sessions.js';
import type { TokenExpiries } from './token-expiries.js';

export interface AdminParts {
  store: RegistryStore;
  directory: Directory;
  clock: Clock;
  engine: ChosenEngine;
  bridge: Bridge;
  expiries: TokenExpiries;
  sessions: SessionTable;
  writer: WriteBehind;
  peers: Peers;
}

export function adminRegistry(parts: AdminParts): Registry {
  const { bridge, peers } = parts;
  const presence = parts.engine.engine;
  /** Changes told to the other nodes by the admin call in progress; its `changed()` waits for them. */
  const told: Promise<unknown>[] = [];
  const tell = (change: ControlOp) => void told.push(peers.ask(change));
  return new Registry(parts.store, parts.directory, parts.clock, {
    isAgentOnline: (agentId) => presence.isAgentOnline(agentId),
    locateAgent: (agentId) => presence.locateAgent(agentId),
    isAppOnline: (appId) => bridge.isAppOnline(appId),
    scheduleExpiry: (token) => parts.expiries.schedule(token),
    revoke: (kind, id, cause) => {
      bridge.revoke(kind, id, cause);
      tell({ op: 'revoke', kind, id, cause });
    },
    dropSessions: (ownerIds) => {
      dropSessions(parts.sessions, parts.writer, ownerIds);
      tell({ op: 'drop-sessions', ids: [...ownerIds] });
    },
    changed: async () => {
      tell({ op: 'directory' });
      await Promise.all(told.splice(0));
    },
  });
}
