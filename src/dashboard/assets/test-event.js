// Sending a test event as one of the organization's apps (POST /admin/v1/test-events, D9) and watching what that
// app instance receives arrive: `accepted`, the tokens, then the reply or the error. Stop aborts the request, on
// which the bridge's instance cancels its event (S2) and closes: its agent is told, and the event log says cancelled.
import { api, ApiError } from './api.js';
import { h, uid } from './dom.js';
import { checkAll, field, input } from './forms.js';
import { FIELD_RULES, LIMITS } from './spec.js';

const DEFAULT_PAYLOAD = '{"text": "Hello"}';
const THREAD = new RegExp(FIELD_RULES.threadIdPattern, 'u');

function checkPayload(text) {
  let payload;
  try {
    payload = JSON.parse(text);
  } catch (err) {
    return `The payload is not JSON: ${err.message}`;
  }
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload))
    return 'The payload must be a JSON object, such as {"text": "Hello"}.';
  const bytes = new TextEncoder().encode(JSON.stringify(payload)).length;
  if (bytes > LIMITS.payloadMaxBytes) return `At most ${LIMITS.payloadMaxBytes} bytes of compact JSON (now ${bytes}).`;
  return undefined;
}

function checkThread(thread) {
  if (thread === '') return undefined;
  if ([...thread].length > FIELD_RULES.threadIdMaxLength) return `At most ${FIELD_RULES.threadIdMaxLength} characters.`;
  return THREAD.test(thread) ? undefined : 'A thread ID has no control characters.';
}

/** Fills `select` with `[value, label]` options when they changed, keeping the choice. */
function setOptions(select, options, empty) {
  const wanted = JSON.stringify(options);
  if (select.dataset.options === wanted) return;
  const chosen = select.value;
  select.replaceChildren(
    ...(options.length
      ? options.map(([value, label]) => h('option', { value, selected: value === chosen }, label))
      : [h('option', { value: '' }, empty)]),
  );
  select.dataset.options = wanted;
}

/** `{ element, update(apps, agents), choose(agent), stop() }`. */
export function testEventPanel() {
  const titleId = uid('test-event-title');
  const app = field({
    name: 'app_id',
    label: 'As app',
    control: h('select'),
    check: (v) => (v ? undefined : 'Register an app first: the test event is sent as one.'),
  });
  const agent = field({
    name: 'agent_id',
    label: 'To agent',
    control: h('select'),
    check: (v) => (v ? undefined : 'Register an agent first.'),
  });
  const payload = field({
    name: 'payload',
    label: 'Payload (JSON)',
    hint: "What an app would send as the event's payload: a JSON object.",
    control: h('textarea', { rows: 3, class: 'payload', spellcheck: 'false' }, DEFAULT_PAYLOAD),
    check: checkPayload,
  });
  const thread = field({
    name: 'thread_id',
    label: 'Thread (optional)',
    hint: `The thread, and so the session, of the event; ${FIELD_RULES.testEventThread} when empty.`,
    control: input({ placeholder: FIELD_RULES.testEventThread }),
    read: (c) => c.value.trim(),
    check: checkThread,
  });
  const fields = [app, agent, payload, thread];
  const send = h('button', { type: 'submit', class: 'primary' }, 'Send test event');
  const stop = h('button', { type: 'button', class: 'quiet', disabled: true }, 'Stop');
  const output = h('div');
  const formEl = h(
    'form',
    { 'aria-labelledby': titleId, novalidate: true, class: 'test-event' },
    fields.map((f) => f.element),
    h('div', { class: 'actions' }, send, stop),
  );
  let controller;

  formEl.addEventListener('submit', (event) => {
    event.preventDefault();
    if (controller) return;
    if (!checkAll(fields)) return;
    const body = { app_id: app.value(), agent_id: agent.value(), payload: JSON.parse(payload.value()) };
    if (thread.value()) body.thread_id = thread.value();
    run(body);
  });
  stop.addEventListener('click', () => controller?.abort());

  async function run(body) {
    controller = new AbortController();
    send.disabled = true;
    stop.disabled = false;
    const said = h('p', { role: 'status' }, 'Sending…');
    const accepted = h('p', {});
    const tokens = h('output', { class: 'tokens-out', 'aria-label': 'Tokens as they arrive' });
    const result = h('div', {});
    const agentName = agent.control.selectedOptions[0]?.textContent ?? body.agent_id;
    output.replaceChildren(
      h(
        'section',
        { class: 'stream', 'aria-label': 'Test event' },
        h('h3', {}, `Test event to ${agentName}`),
        said,
        accepted,
        h('p', { class: 'hint' }, 'Tokens:'),
        tokens,
        result,
      ),
    );
    let ended = false;
    const frames = {
      accepted(frame) {
        accepted.replaceChildren('Accepted: event ', h('code', {}, frame.event_id));
        said.textContent = 'Accepted; waiting for the agent…';
      },
      token(frame) {
        tokens.append(frame.token);
      },
      reply(frame) {
        ended = true;
        said.textContent = 'Replied.';
        result.replaceChildren(
          h(
            'p',
            {},
            h('strong', {}, 'Reply: '),
            frame.content ? h('span', { class: 'reply' }, frame.content) : 'its text is the tokens above.',
          ),
        );
      },
      error(frame) {
        ended = true;
        said.textContent = 'Ended with an error.';
        result.replaceChildren(h('p', { class: 'failed' }, `Error ${frame.code}: ${frame.error}`));
      },
    };
    try {
      await api.stream('/admin/v1/test-events', body, {
        signal: controller.signal,
        onEvent: (type, frame) => frames[type]?.(frame),
      });
      if (!ended) said.textContent = 'The bridge ended the stream without a reply or an error.';
    } catch (err) {
      if (err.name === 'AbortError')
        said.textContent =
          'Stopped. The event was cancelled: its agent is told (if it asked to be), and the event log says cancelled.';
      else {
        said.textContent = err instanceof ApiError ? 'Not sent.' : 'The stream broke off.';
        result.replaceChildren(
          h('p', { class: 'failed' }, err instanceof ApiError ? `Error ${err.code}: ${err.message}` : err.message),
        );
      }
    } finally {
      controller = undefined;
      send.disabled = false;
      stop.disabled = true;
    }
  }

  return {
    element: h(
      'section',
      { 'aria-labelledby': titleId },
      h('h2', { id: titleId }, 'Send a test event'),
      h(
        'p',
        {},
        'Sent by the bridge as an instance of the chosen app, with every rule of a real app (allowlist, rate limit, event log); what that instance receives appears below as it arrives.',
      ),
      formEl,
      output,
    ),
    update(apps, agents) {
      setOptions(
        app.control,
        apps.filter((a) => a.active).map((a) => [a.app_id, a.name]),
        'No active app',
      );
      setOptions(
        agent.control,
        agents.filter((a) => a.active).map((a) => [a.agent_id, a.name]),
        'No active agent',
      );
    },
    choose(chosen) {
      agent.control.value = chosen.agent_id;
      payload.control.focus();
      formEl.scrollIntoView({ block: 'center' });
    },
    stop: () => controller?.abort(),
  };
}
