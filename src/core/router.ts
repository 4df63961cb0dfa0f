// Where live connections are and how frames reach them. The bridge core talks to agents only through this
// interface, so running several nodes (an app on one, its agent on another) means adding an implementation
// backed by a shared bus, not changing the core.

/** One live WebSocket connection, as the core sees it: it can be written to and closed. */
export interface Connection {
  readonly id: number;
  send(frame: string): void;
  close(code: number, reason: string): void;
}

export interface Router {
  /** Makes `conn` the agent's connection; returns the connection it replaces, if any. */
  attachAgent(agentId: string, conn: Connection): Connection | undefined;
  /** Forgets `conn` if it is still the agent's connection; returns whether it was. */
  detachAgent(agentId: string, conn: Connection): boolean;
  isAgentOnline(agentId: string): boolean;
  /** Delivers a frame to the agent's connection; false when the agent is not connected. */
  toAgent(agentId: string, frame: string): boolean;
}

/** The single-node router: the agents' connections in a map. */
export class LocalRouter implements Router {
  private readonly agents = new Map<string, Connection>();

  attachAgent(agentId: string, conn: Connection): Connection | undefined {
    const previous = this.agents.get(agentId);
    this.agents.set(agentId, conn);
    return previous === conn ? undefined : previous;
  }

  detachAgent(agentId: string, conn: Connection): boolean {
    if (this.agents.get(agentId) !== conn) return false;
    this.agents.delete(agentId);
    return true;
  }

  isAgentOnline(agentId: string): boolean {
    return this.agents.has(agentId);
  }

  toAgent(agentId: string, frame: string): boolean {
    const conn = this.agents.get(agentId);
    if (!conn) return false;
    conn.send(frame);
    return true;
  }
}
