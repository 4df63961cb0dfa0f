// The bridge's only time source. It stands still until the `tick` op moves it, so every deadline (agent timeout,
// rotation grace, session TTL) is exact and under the caller's control; nothing reads real time after start.
interface Timer {
  at: number;
  run: () => void;
}

export class Clock {
  #now: number;
  #timers = new Map<number, Timer>();
  #nextId = 1;

  constructor(start: number) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  /** Runs `run` once the clock reaches now + ms. Returns a function that cancels it. */
  after(ms: number, run: () => void): () => void {
    const id = this.#nextId++;
    this.#timers.set(id, { at: this.#now + ms, run });
    return () => void this.#timers.delete(id);
  }

  /** Moves time forward; due timers fire in deadline order, each seeing the clock at its own deadline. */
  advance(ms: number): void {
    const target = this.#now + ms;
    for (;;) {
      let due: [number, Timer] | undefined;
      for (const entry of this.#timers) {
        if (entry[1].at <= target && (!due || entry[1].at < due[1].at)) due = entry;
      }
      if (!due) break;
      this.#timers.delete(due[0]);
      this.#now = Math.max(this.#now, due[1].at);
      due[1].run();
    }
    this.#now = target;
  }
}
