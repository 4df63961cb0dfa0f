// GET /: whoever opens the bridge's address in a browser is pointed to the dashboard and the probes, not given a 404.
import { expect } from 'chai';
import { startTestBridge, stopAll } from '../helpers/bridge.js';

describe('the home page', function () {
  after(stopAll);

  it('answers GET / with an HTML page linking the dashboard and the probes, without authentication', async function () {
    const bridge = await startTestBridge();
    const res = await fetch(new URL('/', bridge.url));
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/html/);
    const page = await res.text();
    for (const link of ['href="/dashboard"', 'href="/docs/"', 'href="/healthz"', 'href="/readyz"']) expect(page).to.include(link);
  });
});
