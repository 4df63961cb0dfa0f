// GET /: whoever opens the bridge's address in a browser lands on the dashboard, not on a 404.
import { expect } from 'chai';
import { startTestBridge, stopAll } from '../helpers/bridge.js';

describe("the bridge's address", function () {
  after(stopAll);

  it('redirects GET / to the dashboard, without authentication', async function () {
    const bridge = await startTestBridge();
    const res = await fetch(new URL('/', bridge.url), { redirect: 'manual' });
    expect(res.status).to.equal(302);
    expect(res.headers.get('location')).to.equal('/dashboard');
    const followed = await fetch(new URL('/', bridge.url));
    expect(followed.url).to.equal(new URL('/dashboard', bridge.url).href);
    expect(await followed.text()).to.include('<title>Bridge dashboard</title>');
  });
});
