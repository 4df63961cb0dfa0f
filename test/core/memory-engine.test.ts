// The engine of a bridge of one node judged by the contract every engine meets (test/helpers/engine-contract.ts).
import { MemoryEngine } from '../../src/core/memory-engine.js';
import { engineContract } from '../helpers/engine-contract.js';

engineContract('MemoryEngine (one node)', {
  nodes: 1,
  sharedBuckets: true, // one node, one bucket per app
  start: async () => ({
    engines: [new MemoryEngine()],
    kill: () => Promise.reject(new Error('one node: no other is left to see it gone')),
    close: async () => {},
  }),
});
