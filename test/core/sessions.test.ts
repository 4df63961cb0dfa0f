// The session table's bounds: per app (L17), the least recently used session of the app goes, nobody else's; per node
// (L23), the node's least recently used, whichever app's.
import { expect } from 'chai';
import { SessionTable } from '../../src/core/sessions.js';

const TTL = 1_000_000;

describe('the session table', function () {
  it("evicts the app's least recently used session when one more would pass maxPerApp, and only that app's", function () {
    const table = new SessionTable(2);
    const open = (app: string, thread: string, now = 0) =>
      table.open(`svc:ag:${app}:${thread}`, 'ag', app, thread, TTL, now);
    expect(open('a', '1').evicted).to.equal(undefined);
    expect(open('a', '2').evicted).to.equal(undefined);
    expect(open('b', '1').evicted).to.equal(undefined);
    expect(open('a', '1').change).to.equal('reused'); // 2 is now the least recently used of app a
    expect(open('a', '3').evicted?.thread_id).to.equal('2');
    expect(table.list(0).map((s) => `${s.app_id}:${s.thread_id}`)).to.deep.equal(['a:1', 'a:3', 'b:1']);
    expect(open('a', '2').change).to.equal('created'); // its record is gone; the thread starts a new one
  });

  it('counts an expired session until it is replaced or swept, and frees its place when swept', function () {
    const table = new SessionTable(1);
    table.open('svc:ag:a:1', 'ag', 'a', '1', 10, 0);
    expect(table.open('svc:ag:a:1', 'ag', 'a', '1', 10, 20).change).to.equal('recreated'); // replaced, not evicted
    expect(table.sweep(100)).to.have.length(1);
    expect(table.open('svc:ag:a:2', 'ag', 'a', '2', 10, 100).evicted).to.equal(undefined);
  });

  it('keeps the newest sessions of each app when loading more than maxPerApp, and returns the others', function () {
    const table = new SessionTable(2);
    const record = (thread: string, created_at: number) => ({
      session_key: `svc:ag:a:${thread}`,
      agent_id: 'ag',
      app_id: 'a',
      thread_id: thread,
      created_at,
      expires_at: created_at + TTL,
    });
    const evicted = table.load([record('new', 3), record('old', 1), record('mid', 2)]);
    expect(evicted.map((s) => s.thread_id)).to.deep.equal(['old']);
    expect(table.list(0).map((s) => s.thread_id)).to.deep.equal(['mid', 'new']);
  });

  it("evicts the node's least recently used session, whichever app's, when one more would pass the node's bound", function () {
    const table = new SessionTable(10, 3);
    const open = (app: string, thread: string) => table.open(`svc:ag:${app}:${thread}`, 'ag', app, thread, TTL, 0);
    open('a', '1');
    open('b', '1');
    open('c', '1');
    expect(open('a', '1').change).to.equal('reused'); // b:1 is now the node's least recently used
    expect(open('d', '1').evicted).to.include({ app_id: 'b', thread_id: '1' });
    expect(table.size).to.equal(3);
    expect(table.list(0).map((s) => s.app_id)).to.deep.equal(['a', 'c', 'd']);
  });
});
