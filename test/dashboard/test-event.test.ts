// A test event from an organization's page (D9) in Chromium: the payload is checked before anything is sent, and
// what the bridge's app instance receives appears as it arrives: accepted, each token (as text), then the reply or
// the error; Stop ends the request.
import { expect } from 'chai';
import { startTestBridge } from '../helpers/bridge.js';
import { browserSuite, goTo, screenshot, signIn } from './browser.js';

describe('dashboard test event', function () {
  this.timeout(90_000);
  const { open } = browserSuite();

  it('sends a test event as a chosen app and shows accepted, the tokens as they arrive and the reply, an error, and Stop', async function () {
    const bridge = await startTestBridge();
    const org = await bridge.org('Acme School');
    await bridge.app(org.org_id, 'Classroom');
    const library = await bridge.app(org.org_id, 'Library');
    const agent = await bridge.agent(org.org_id, 'Maths Tutor');
    const agentClient = await bridge.connectAgent(agent.token);
    const { page, errors } = await open(bridge);
    const sent: string[] = [];
    page.on('request', (r) => new URL(r.url()).pathname === '/admin/v1/test-events' && sent.push(r.postData() ?? ''));
    await signIn(page);
    await goTo(page, 'Organizations');
    await page.getByRole('link', { name: 'Acme School' }).click();

    const form = page.getByRole('form', { name: 'Send a test event' });
    await page.getByRole('button', { name: 'Send a test event to Maths Tutor' }).click();
    expect(
      await form.getByLabel('Payload (JSON)').evaluate((el: any) => el.ownerDocument.activeElement === el),
      'the payload has the focus',
    ).to.equal(true);
    expect(await form.getByLabel('Payload (JSON)').inputValue()).to.equal('{"text": "Hello"}');
    await form.getByLabel('As app').selectOption({ label: 'Library' });
    await form.getByLabel('Payload (JSON)').fill('{"text": ');
    await form.getByRole('button', { name: 'Send test event' }).click();
    await form.getByText(/^The payload is not JSON: /).waitFor();
    await form.getByLabel('Payload (JSON)').fill('["Hello"]');
    await form.getByLabel('Thread (optional)').fill('bad\u0007thread');
    await form.getByRole('button', { name: 'Send test event' }).click();
    await form.getByText('The payload must be a JSON object, such as {"text": "Hello"}.').waitFor();
    await form.getByText('A thread ID has no control characters.').waitFor();
    expect(sent, 'nothing invalid is sent').to.deep.equal([]);

    await form.getByLabel('Payload (JSON)').fill('{"text": "What is 2 + 2?"}');
    await form.getByLabel('Thread (optional)').fill('lesson-1');
    await form.getByRole('button', { name: 'Send test event' }).click();
    const event = await agentClient.expect('event');
    expect(event).to.deep.include({
      app_id: library.app_id,
      thread_id: 'lesson-1',
      payload: { text: 'What is 2 + 2?' },
    });
    expect(JSON.parse(sent[0]!)).to.deep.equal({
      app_id: library.app_id,
      agent_id: agent.agent_id,
      thread_id: 'lesson-1',
      payload: { text: 'What is 2 + 2?' },
    });
    const stream = page.getByRole('region', { name: 'Test event' });
    await stream.getByText(`Accepted: event ${event.event_id}`).waitFor();
    const tokens = stream.getByRole('status', { name: 'Tokens as they arrive' });
    agentClient.send({ type: 'token', event_id: event.event_id, token: 'It is <b>' });
    await stream.getByText('It is <b>').waitFor(); // the first token is shown before the second is even sent
    agentClient.send({ type: 'token', event_id: event.event_id, token: 'four</b>.' });
    agentClient.send({ type: 'reply', event_id: event.event_id, content: '', done: true });
    await stream.getByText('Replied.').waitFor();
    expect(await tokens.textContent(), 'tokens are text, never markup').to.equal('It is <b>four</b>.');
    await stream.getByText('Reply: its text is the tokens above.').waitFor();
    await screenshot(page, 'test-event');

    await form.getByRole('button', { name: 'Send test event' }).click();
    const failing = await agentClient.expect('event');
    expect(failing.thread_id).to.equal('lesson-1');
    agentClient.send({
      type: 'error',
      event_id: failing.event_id,
      code: 'AGENT_ERROR',
      error: 'The model backend is unavailable.',
    });
    await stream.getByText('Error AGENT_ERROR: The model backend is unavailable.').waitFor();

    await form.getByRole('button', { name: 'Send test event' }).click();
    const stopped = await agentClient.expect('event');
    await stream.getByText(`Accepted: event ${stopped.event_id}`).waitFor();
    await form.getByRole('button', { name: 'Stop' }).click();
    await stream.getByText(/^Stopped\./).waitFor();
    expect(await form.getByRole('button', { name: 'Stop' }).isDisabled()).to.equal(true);
    expect(errors).to.deep.equal([]);
  });
});
