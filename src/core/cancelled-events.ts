// The events an app cancelled whose agent may still send frames about them (S4): those frames are dropped without
// an error, until the agent's reply or error for the event or agentTimeoutMs after the cancel, whichever comes
// first. Bounded per agent by eventsInFlightPerAgentMax, the oldest forgotten first: an agent cannot have had more
// of them in flight.
import type { Clock, Timer } from '../shared/clock.js';

export class CancelledEvents {
  /** Per agent, its cancelled events in the order they were cancelled, each with the timer that forgets it. */
  private readonly byAgent = new Map<string, Map<string, Timer>>();
  private count = 0;

  constructor(
    private readonly clock: Clock,
    private readonly rememberMs: number,
    private readonly perAgentMax: number,
  ) {}

  /** How many are remembered now (bridge_cancelled_events_remembered). */
  get size(): number {
    return this.count;
  }

  remember(agentId: string, eventId: string): void {
    let of = this.byAgent.get(agentId);
    if (!of) this.byAgent.set(agentId, (of = new Map()));
    if (of.size >= this.perAgentMax) {
      const oldest = of.keys().next().value;
      if (oldest !== undefined) this.forget(agentId, oldest);
      if (!this.byAgent.has(agentId)) this.byAgent.set(agentId, of);
    }
    of.set(
      eventId,
      this.clock.setTimer(this.rememberMs, () => this.forget(agentId, eventId)),
    );
    this.count++;
  }

  /**
   * Whether the agent's frame about `eventId` is to be dropped: the event was cancelled and is still remembered.
   * `final`: a reply or an error, after which the agent sends nothing more about it, so it is forgotten.
   */
  drops(agentId: string, eventId: string, final: boolean): boolean {
    if (!this.byAgent.get(agentId)?.has(eventId)) return false;
    if (final) this.forget(agentId, eventId);
    return true;
  }

  stop(): void {
    for (const of of this.byAgent.values()) for (const timer of of.values()) timer.cancel();
    this.byAgent.clear();
    this.count = 0;
  }

  private forget(agentId: string, eventId: string): void {
    const of = this.byAgent.get(agentId);
    const timer = of?.get(eventId);
    if (!of || !timer) return;
    timer.cancel();
    of.delete(eventId);
    this.count--;
    if (!of.size) this.byAgent.delete(agentId);
  }
}
