// A token, shown once: the bridge stores only its hash, so this panel is the only place it ever appears. The page
// keeps it nowhere else, and it is gone when the panel is closed or the page left.
import { h, uid, utc } from './dom.js';

const WHERE = {
  app: "the app's environment configuration (for example an environment variable read at start)",
  agent: "the agent's environment configuration, such as the connector's agents.yaml with ${VARIABLE} references",
};

/**
 * `owner` is `{ kind: 'app' | 'agent', name, id }`; `previousEndsAt` is set after a rotation. The panel takes the
 * focus; closing it removes the token from the page.
 */
export function tokenPanel({ owner, token, previousEndsAt }) {
  const titleId = uid('token-title');
  const tokenId = uid('token');
  const copyResult = h('span', { class: 'copy-result', role: 'status' });
  const value = h('input', {
    id: tokenId,
    class: 'token',
    type: 'text',
    readonly: true,
    value: token,
    spellcheck: 'false',
    autocomplete: 'off',
  });
  const copy = h(
    'button',
    { type: 'button', class: 'primary', onclick: () => copyToken(value, copyResult) },
    'Copy token',
  );
  const close = h(
    'button',
    { type: 'button', class: 'quiet', onclick: () => panel.remove() },
    'I have stored it: hide the token',
  );
  const title = h(
    'h3',
    { id: titleId, tabindex: '-1' },
    `${owner.kind === 'app' ? 'App' : 'Agent'} token of “${owner.name}”: shown once`,
  );
  const panel = h(
    'section',
    { class: 'token-panel', 'aria-labelledby': titleId, 'data-token-for': owner.id },
    title,
    h(
      'p',
      { class: 'warning' },
      h('strong', {}, 'Copy this token now. '),
      'The bridge keeps only a hash of it and can never show it again; if it is lost, rotate the token. ',
      `Keep it in ${WHERE[owner.kind]}, never in code, version control or a payload.`,
    ),
    previousEndsAt
      ? h(
          'p',
          { class: 'grace' },
          `The previous token keeps working until ${utc(previousEndsAt)} (one hour), then stops and its connections close: switch to the new token before then.`,
        )
      : null,
    h('div', { class: 'token-row' }, h('label', { for: tokenId }, 'Token'), value, copy, copyResult),
    h('div', { class: 'actions' }, close),
  );
  return { panel, focus: () => title.focus() };
}

async function copyToken(input, result) {
  try {
    await navigator.clipboard.writeText(input.value);
    result.textContent = 'Copied to the clipboard.';
  } catch {
    // No clipboard access (a page served over plain http to another machine): select it for Ctrl+C instead.
    input.focus();
    input.select();
    result.textContent = 'Could not copy automatically: the token is selected, press Ctrl+C (⌘C on a Mac).';
  }
}
