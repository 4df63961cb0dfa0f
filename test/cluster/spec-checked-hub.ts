// A memory hub that judges every message a node sends by the spec (asyncapi.yaml's internal `bus` channel, O16):
// the nodes do not validate what they receive (a version and a kind are all they check), so the tests do it for
// what they send. A test file's afterEach expects `takeOffSpec()` to be empty.
import { describeErrors, validateBusMessage } from '../../generated/index.js';
import { MemoryHub } from '../../src/cluster/memory-bus.js';

const offSpec: string[] = [];

export function specCheckedHub(): MemoryHub {
  const hub = new MemoryHub();
  const deliver = hub.deliver.bind(hub);
  hub.deliver = (from, to, message) => {
    if (!validateBusMessage(message)) {
      const shown = JSON.stringify(message).slice(0, 200);
      offSpec.push(`${from} -> ${to} ${shown}: ${describeErrors(validateBusMessage.errors)}`);
    }
    deliver(from, to, message);
  };
  return hub;
}

/** Every message sent off the spec since the last call. */
export function takeOffSpec(): string[] {
  return offSpec.splice(0);
}
