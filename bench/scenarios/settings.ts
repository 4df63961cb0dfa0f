// The knobs of a run, from the command line; --quick shrinks every scenario for a smoke run under a minute.
export interface Settings {
  quick: boolean;
  m: number;
  n: number;
  window: number;
  warmupS: number;
  durationS: number;
  payloadBytes: number;
  /** Scenario 2: the open-loop rates, fragments/s. */
  rates: number[];
  /** Scenario 3: the open-loop rate, events/s, and the closed-loop window per app. */
  eventRate: number;
  eventWindow: number;
  eventApps: number;
  /** Scenario 4. */
  idleConnections: number;
  soakS: number;
  soakEventsPerS: number;
  /** Run one target alone: the bridge, the bare relay or the Socket.IO relay (scenario 4 has no Socket.IO peer). */
  only?: 'bridge' | 'relay' | 'socketio';
  /** Scenario cluster: the servers it makes its database and links its nodes on (skipped without both). */
  postgresUrl?: string;
  redisUrl?: string;
  /** Scenario cluster: the open-loop rate, fragments/s. */
  clusterRate: number;
  /** Scenario resume: the open-loop rates (fragments/s), and the events held open with their fragments each. */
  resumeRates: number[];
  resumeEvents: number;
  resumeFragments: number;
  /** Scenario abuse: which attacks (all when absent). */
  attacks?: import('../load/abuse.js').Attack[];
  /** Write a CPU profile of the bridge for each scenario into this folder. */
  profileDir?: string;
}
