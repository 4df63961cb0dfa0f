// Editing and removing from the dashboard (T5, H6): renames and an agent's description and TTL reach the listings
// and the directory at once; deleting an organization says what goes, asks for its name, and closes the live
// connections of its apps and agents.
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { startTestBridge, type TestBridge } from '../helpers/bridge.js';
import { browserSuite, row, screenshot, signIn, untilStatus } from './browser.js';

describe('dashboard: edit and remove', function () {
  this.timeout(90_000);
  const { open } = browserSuite();

  async function openOrg(bridge: TestBridge, orgId: string, name: string) {
    const opened = await open(bridge);
    await signIn(opened.page);
    await opened.page.goto(`${bridge.url}/dashboard#/orgs/${orgId}`);
    await opened.page.getByRole('heading', { level: 1, name }).waitFor();
    return opened;
  }

  /** The bodies of the PATCH requests the page sent. */
  const patches = (page: Page) => {
    const sent: { path: string; body: unknown }[] = [];
    page.on(
      'request',
      (r) => r.method() === 'PATCH' && sent.push({ path: new URL(r.url()).pathname, body: r.postDataJSON() }),
    );
    return sent;
  };

  it("renames an organization, an app and an agent, changes the agent's description and TTL, and the directory shows it", async function () {
    const bridge = await startTestBridge();
    const org = await bridge.org('Acme School');
    const app = await bridge.app(org.org_id, 'Classroom');
    const agent = await bridge.agent(org.org_id, 'Maths Tutor', { description: 'Explains maths.' });
    const { page, errors } = await openOrg(bridge, org.org_id, 'Acme School');
    const sent = patches(page);

    await page.getByRole('button', { name: 'Rename organization…' }).click();
    const orgDialog = page.getByRole('dialog', { name: 'Rename Acme School' });
    await orgDialog.getByLabel('Organization name').fill('  ');
    await orgDialog.getByRole('button', { name: 'Save name' }).click();
    await orgDialog.getByText('Enter a name.').waitFor();
    expect(sent, 'an empty name is not sent').to.deep.equal([]);
    await orgDialog.getByLabel('Organization name').fill('Acme Learning');
    await orgDialog.getByRole('button', { name: 'Save name' }).click();
    await page.getByRole('heading', { level: 1, name: 'Acme Learning' }).waitFor();
    await page.getByRole('status').getByText('Acme School is now called Acme Learning.').waitFor();

    await row(page, 'Classroom').getByRole('button', { name: 'Rename Classroom' }).click();
    const appDialog = page.getByRole('dialog', { name: 'Rename Classroom' });
    await appDialog.getByText(`Its ID ${app.app_id} and its token stay`).waitFor();
    await appDialog.getByLabel('App name').fill('Classroom (iOS)');
    await appDialog.getByRole('button', { name: 'Save name' }).click();
    await row(page, 'Classroom (iOS)').getByRole('button', { name: 'Rename Classroom (iOS)' }).waitFor(); // the apps table's row, not the live one

    await row(page, 'Maths Tutor').getByRole('button', { name: 'Edit Maths Tutor' }).click();
    const agentDialog = page.getByRole('dialog', { name: 'Edit Maths Tutor' });
    await agentDialog
      .getByText(
        'A new TTL applies to the sessions started from now on: a conversation under way keeps the expiry it was given when it started.',
      )
      .waitFor();
    expect(await agentDialog.getByLabel('Description (optional)').inputValue()).to.equal('Explains maths.');
    expect(await agentDialog.getByLabel('Session TTL (days)').inputValue()).to.equal('14');
    await agentDialog.getByLabel('Session TTL (days)').fill('0');
    await agentDialog.getByRole('button', { name: 'Save changes' }).click();
    await agentDialog.getByText('Enter a whole number of days from 1 to 3650.').waitFor();
    await agentDialog.getByLabel('Agent name').fill('Physics Tutor');
    await agentDialog.getByLabel('Description (optional)').fill('Explains physics, step by step.');
    await agentDialog.getByLabel('Session TTL (days)').fill('30');
    await screenshot(page, 'edit-agent', false);
    await agentDialog.getByRole('button', { name: 'Save changes' }).click();
    const tutor = row(page, 'Physics Tutor');
    await tutor.getByText('30 days').waitFor();
    await tutor.getByText('Explains physics, step by step.').waitFor();

    // Only what changed is sent; a second edit of the TTL alone sends the TTL alone.
    await tutor.getByRole('button', { name: 'Edit Physics Tutor' }).click();
    await page.getByRole('dialog', { name: 'Edit Physics Tutor' }).getByLabel('Session TTL (days)').fill('7');
    await page
      .getByRole('dialog', { name: 'Edit Physics Tutor' })
      .getByRole('button', { name: 'Save changes' })
      .click();
    await tutor.getByText('7 days').waitFor();
    expect(sent).to.deep.equal([
      { path: `/admin/v1/organizations/${org.org_id}`, body: { name: 'Acme Learning' } },
      { path: `/admin/v1/apps/${app.app_id}`, body: { name: 'Classroom (iOS)' } },
      {
        path: `/admin/v1/agents/${agent.agent_id}`,
        body: { name: 'Physics Tutor', description: 'Explains physics, step by step.', ttl_days: 30 },
      },
      { path: `/admin/v1/agents/${agent.agent_id}`, body: { ttl_days: 7 } },
    ]);

    // What apps see: the directory, with the app's own token.
    const directory = await bridge.http('GET', `/v1/organizations/${org.org_id}/agents`, {
      token: app.token,
      schema: 'AgentDirectory',
    });
    expect(
      directory.body.agents.map((a: { id: string; name: string; description: string }) => [
        a.id,
        a.name,
        a.description,
      ]),
    ).to.deep.equal([[agent.agent_id, 'Physics Tutor', 'Explains physics, step by step.']]);
    // And the organizations list, after a reload.
    await page.goto(`${bridge.url}/dashboard#/orgs`);
    await page.getByRole('link', { name: 'Acme Learning' }).waitFor();
    expect(errors).to.deep.equal([]);
  });

  it('deletes an organization only once its name is typed, after naming what goes and who is online, and closes their connections', async function () {
    const bridge = await startTestBridge();
    const org = await bridge.org('Acme School');
    const classroom = await bridge.app(org.org_id, 'Classroom');
    await bridge.app(org.org_id, 'Library');
    const tutor = await bridge.agent(org.org_id, 'Maths Tutor');
    await bridge.agent(org.org_id, 'Spare Tutor');
    const other = await bridge.org('Other School');
    const otherApp = await bridge.app(other.org_id, 'Their App');
    const agentClient = await bridge.connectAgent(tutor.token);
    const appClient = await bridge.connectApp(classroom.token);
    const theirClient = await bridge.connectApp(otherApp.token);
    const { page, errors } = await openOrg(bridge, org.org_id, 'Acme School');
    await untilStatus(page, 'Maths Tutor', 'online');
    await untilStatus(page, 'Classroom', 'online');

    await page.getByRole('button', { name: 'Delete organization…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete Acme School?' });
    await dialog.getByText('2 apps and 2 agents', { exact: true }).waitFor();
    await dialog.getByText('2 of them are online now').waitFor();
    expect(await dialog.getByRole('listitem').allTextContents()).to.deep.equal(['app Classroom', 'agent Maths Tutor']);
    await dialog.getByText('This cannot be undone:').waitFor();
    const typed = dialog.getByLabel(`Type the organization's name (Acme School) or its ID to confirm`);
    await typed.fill('Other School');
    await screenshot(page, 'delete-organization', false);
    await dialog.getByRole('button', { name: 'Delete organization' }).click();
    await dialog.getByText(`Type “Acme School” or “${org.org_id}” exactly.`).waitFor();
    await appClient.expectNothingBeforePong(); // nothing was deleted
    expect((await bridge.http('GET', `/admin/v1/organizations/${org.org_id}/apps`)).status).to.equal(200);

    await typed.fill('Acme School');
    await dialog.getByRole('button', { name: 'Delete organization' }).click();
    await page.getByRole('heading', { level: 1, name: 'Organizations' }).waitFor();
    await page.getByRole('status').getByText('Organization Acme School deleted, with 2 apps and 2 agents.').waitFor();
    await page.getByRole('link', { name: 'Other School' }).waitFor();
    expect(await page.getByRole('link', { name: 'Acme School' }).count()).to.equal(0);

    expect(await appClient.waitForClose()).to.deep.equal({ code: 4410, reason: 'TOKEN_REVOKED' });
    expect(await agentClient.waitForClose()).to.deep.equal({ code: 4410, reason: 'TOKEN_REVOKED' });
    await theirClient.expectNothingBeforePong(); // another organization's connection stays
    expect((await bridge.http('GET', `/admin/v1/organizations/${org.org_id}/apps`)).status).to.equal(404);
    expect(errors).to.deep.equal([]);
  });
});
