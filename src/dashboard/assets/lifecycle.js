// Rotating and deactivating an app's or agent's token, and closing one connection, each behind a confirmation that
// says what will happen.
import { api, enc } from './api.js';
import { openDialog } from './dialog.js';
import { h, time } from './dom.js';
import { ROTATION_GRACE_MS } from './spec.js';

const path = (owner, action) => `/admin/v1/${owner.kind}s/${enc(owner.id)}/${action}`;
const hours = ROTATION_GRACE_MS / 3_600_000;
const grace = hours === 1 ? 'one more hour' : `${hours} more hours`;

/** Resolves with `{ token, previous_token_expires_at }`, or undefined when cancelled. */
export function rotate(owner) {
  return openDialog({
    title: `Rotate the token of ${owner.name}?`,
    content: h(
      'p',
      {},
      `A new token is issued and shown once. The current token keeps working for ${grace}, then stops, and connections opened with it close: give the ${owner.kind} its new token before then.`,
    ),
    confirmLabel: 'Rotate token',
    action: () => api.post(path(owner, 'rotate-token')),
  });
}

/** Resolves with the deactivated record, or undefined when cancelled. */
export function deactivate(owner) {
  const effects =
    owner.kind === 'app'
      ? 'Its live connections close at once and its tokens stop working (TOKEN_REVOKED).'
      : 'Its live connection closes at once, events it is answering end with AGENT_OFFLINE, its tokens stop working (TOKEN_REVOKED) and apps no longer see it.';
  return openDialog({
    title: `Deactivate ${owner.name}?`,
    content: [
      h('p', {}, effects),
      h(
        'p',
        { class: 'warning' },
        h('strong', {}, 'This is final: '),
        `a deactivated ${owner.kind} cannot be reactivated.`,
      ),
    ],
    confirmLabel: `Deactivate ${owner.kind}`,
    danger: true,
    action: () => api.post(path(owner, 'deactivate')),
  });
}

/** Resolves with the closed connection (`ClosedConnection`), or undefined when cancelled (H8). */
export function disconnect(connection, ownerName) {
  return openDialog({
    title: `Disconnect this connection of ${ownerName}?`,
    content: [
      h(
        'p',
        {},
        'Connection ',
        h('code', {}, connection.connection_id),
        ' on node ',
        h('code', {}, connection.node_id),
        ', connected since ',
        time(connection.connected_at),
        '.',
      ),
      h(
        'p',
        {},
        'It closes at once with DISCONNECTED_BY_ADMIN. Its client may reconnect at once with the same token; its tokens and other connections stay.',
      ),
    ],
    confirmLabel: 'Disconnect',
    danger: true,
    action: () => api.delete(`/admin/v1/connections/${enc(connection.connection_id)}`),
  });
}
