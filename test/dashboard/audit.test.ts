// The audit trail on the page (D10): what was just done, by whom (the admin token, this dashboard session, another
// one), on what and when, newest first and a page at a time.
import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { startTestBridge } from '../helpers/bridge.js';
import { browserSuite, screenshot, signIn } from './browser.js';
import { send, signIn as signInOverHttp } from './cookie-http.js';

const fingerprint = (sessionId: string) => createHash('sha256').update(sessionId).digest('hex').slice(0, 12);

describe('dashboard: audit trail', function () {
  this.timeout(90_000);
  const { open } = browserSuite();

  it('shows the actions just done, telling the admin token, this session and another session apart, with older pages', async function () {
    const bridge = await startTestBridge();
    for (let i = 1; i <= 50; i++) await bridge.org(`Old run ${i}`); // a page's worth from before
    const org = await bridge.org('Acme School');
    const app = await bridge.app(org.org_id, 'Classroom');
    const { context, page, errors } = await open(bridge);
    await signIn(page);
    const mine = fingerprint((await context.cookies()).find((c) => c.name === 'bridge_session')!.value);

    await page.goto(`${bridge.url}/dashboard#/orgs/${org.org_id}`);
    await page.getByRole('button', { name: 'Rename organization…' }).click();
    await page.getByRole('dialog').getByLabel('Organization name').fill('Acme Learning');
    await page.getByRole('dialog').getByRole('button', { name: 'Save name' }).click();
    await page.getByRole('heading', { level: 1, name: 'Acme Learning' }).waitFor();

    // Another operator, in another browser, a few seconds later.
    bridge.clock.advance(5000);
    const other = await signInOverHttp(bridge);
    const renamed = await send(bridge, 'PATCH', `/admin/v1/apps/${app.app_id}`, {
      cookie: other.cookie,
      csrf: other.csrf,
      origin: bridge.url,
      body: { name: 'Classroom (iOS)' },
      schema: 'App',
    });
    expect(renamed.status).to.equal(200);
    const theirs = (await bridge.http('GET', '/admin/v1/audit?limit=1', { schema: 'AuditLog' })).body.entries[0].actor
      .session;
    expect(theirs).to.not.equal(mine);

    await page.getByRole('navigation').getByRole('link', { name: 'Audit' }).click();
    await page.getByRole('heading', { level: 1, name: 'Audit trail' }).waitFor();
    const rows = page.locator('tbody tr');
    await rows.first().waitFor();
    const cells = async (i: number) => (await rows.nth(i).locator('th, td').allTextContents()).map((t) => t.trim());
    expect(await cells(0)).to.deep.equal([
      '2026-11-22 12:00:05 UTC',
      `dashboard session ${theirs}`,
      'app.update',
      app.app_id,
      'name: Classroom (iOS); previous: (name: Classroom)',
    ]);
    expect(await cells(1)).to.deep.equal([
      '2026-11-22 12:00:05 UTC',
      `dashboard session ${theirs}`,
      'dashboard.sign_in',
      '—',
      '—',
    ]);
    expect(await cells(2)).to.deep.equal([
      '2026-11-22 12:00:00 UTC',
      `dashboard session ${mine} (this session)`,
      'organization.update',
      org.org_id,
      'name: Acme Learning; previous: (name: Acme School)',
    ]);
    expect(await cells(3)).to.deep.equal([
      '2026-11-22 12:00:00 UTC',
      `dashboard session ${mine} (this session)`,
      'dashboard.sign_in',
      '—',
      '—',
    ]);
    expect(await cells(4)).to.deep.equal([
      '2026-11-22 12:00:00 UTC',
      'admin token',
      'app.create',
      app.app_id,
      `org_id: ${org.org_id}; name: Classroom`,
    ]);
    expect(await cells(5)).to.deep.equal([
      '2026-11-22 12:00:00 UTC',
      'admin token',
      'organization.create',
      org.org_id,
      'name: Acme School',
    ]);
    expect(await rows.count(), 'a page of 50').to.equal(50);
    await screenshot(page, 'audit');
    // After a reload the page no longer remembers its sign-in: it finds it by when its session began.
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Audit trail' }).waitFor();
    await rows.first().waitFor();
    expect((await cells(2))[1]).to.equal(`dashboard session ${mine} (this session)`);
    expect((await cells(0))[1]).to.equal(`dashboard session ${theirs}`);

    await page.getByRole('button', { name: 'Older entries' }).click();
    await page.waitForURL(/#\/audit\?before=\d+$/);
    await page.getByText('Admin actions (an older page), newest first').waitFor();
    expect(await rows.count(), 'the rest: 50 + 6 entries in all').to.equal(6);
    expect((await cells(5))[2]).to.equal('organization.create');
    expect((await cells(5))[4]).to.equal('name: Old run 1');
    await page.getByRole('button', { name: 'Newest entries' }).click();
    await page.waitForURL(/#\/audit$/);
    await rows.nth(49).waitFor();
    expect(errors).to.deep.equal([]);
  });
});
