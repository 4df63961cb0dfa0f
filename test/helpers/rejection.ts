// The BridgeError a promise rejects with; fails the test when it resolves or rejects with anything else.
import { expect } from 'chai';
import { BridgeError } from '../../src/sdk/app-client.js';

export async function rejection(promise: Promise<unknown>): Promise<BridgeError> {
  try {
    await promise;
  } catch (err) {
    expect(err).to.be.instanceOf(BridgeError);
    return err as BridgeError;
  }
  throw new Error('expected a rejection');
}
