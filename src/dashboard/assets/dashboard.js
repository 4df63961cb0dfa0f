// The dashboard's entry: signing in and out, and the views by address (#/overview, #/orgs?…, #/orgs/<id>?…,
// #/events?…, #/audit?…).
import { api, setSession, whenSignedOut } from './api.js';
import { auditView } from './audit.js';
import { announce, announceOnNextView, h, heading, replace, startView } from './dom.js';
import { eventsView } from './events.js';
import { field, form, input } from './forms.js';
import { orgView } from './org.js';
import { orgsView } from './orgs.js';
import { overviewView } from './overview.js';
import { sessionsView } from './sessions.js';

const main = document.getElementById('main');
const nav = document.getElementById('nav');
const ID = '([a-z0-9-]{1,64})';
const LANDING = '#/overview';
const QUERY = '(?:\\?(.*))?';
const query = (text) => new URLSearchParams(text ?? '');
const ROUTES = [
  [new RegExp(`^#/orgs/${ID}/agents/${ID}/sessions$`), (m) => sessionsView(main, m[1], m[2])],
  [new RegExp(`^#/orgs/${ID}${QUERY}$`), (m) => orgView(main, m[1], query(m[2]))],
  [new RegExp(`^#/events${QUERY}$`), (m) => eventsView(main, query(m[1]))],
  [new RegExp(`^#/orgs${QUERY}$`), (m) => orgsView(main, query(m[1]))],
  [new RegExp(`^#/audit${QUERY}$`), (m) => auditView(main, query(m[1]))],
  [/^#\/overview$/, () => overviewView(main)],
];

let signedIn = false;
let leaveView = () => {};

function show(render) {
  leaveView();
  leaveView = () => {};
  for (const dialog of document.querySelectorAll('dialog[open]')) dialog.close(); // they belong to the view that goes
  startView();
  replace(main);
  leaveView = render() ?? (() => {});
  const title = main.querySelector('h1');
  document.title = `${title?.textContent ?? 'Dashboard'} · Bridge dashboard`;
  title?.focus();
}

function route() {
  if (!signedIn) return;
  const hash = location.hash;
  const match = ROUTES.map(([pattern, view]) => [pattern.exec(hash), view]).find(([m]) => m);
  if (!match) return location.replace(LANDING);
  for (const link of nav.querySelectorAll('a')) {
    if (hash.startsWith(link.getAttribute('href'))) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  show(() => match[1](match[0]));
}

function signedInWith(session) {
  setSession(session);
  signedIn = true;
  nav.hidden = false;
  if (ROUTES.some(([pattern]) => pattern.test(location.hash))) route();
  else location.replace(LANDING); // routed by the hashchange that follows
}

function signedOut(message, kind = 'info') {
  setSession(undefined);
  signedIn = false;
  nav.hidden = true;
  show(signInView);
  if (message) announce(message, kind);
}

function signInView() {
  const token = field({
    name: 'admin_token',
    label: 'Admin token',
    hint: 'The value of ADMIN_TOKEN that the bridge was started with.',
    control: input({ type: 'password' }),
    check: (v) => (v ? undefined : 'Enter the admin token.'),
  });
  main.append(
    heading('Sign in'),
    h(
      'p',
      {},
      'Register organizations, apps and agents, see each token once, keep allowlists, rotate and deactivate tokens, and read the event log.',
    ),
    form({
      label: 'Sign in',
      submitLabel: 'Sign in',
      fields: [token],
      async send(values) {
        const session = await api.post('/dashboard/session', values);
        announceOnNextView('Signed in. The session lasts 12 hours; signing out ends it at once.');
        signedInWith(session);
      },
    }),
    aboutTheBridge(),
  );
}

/** What the bridge's address used to show before it led here (GET / redirects to the dashboard). */
function aboutTheBridge() {
  return h(
    'section',
    { 'aria-labelledby': 'about-title', class: 'about' },
    h('h2', { id: 'about-title' }, 'About this bridge'),
    h(
      'ul',
      {},
      h(
        'li',
        {},
        h('a', { href: '/docs/' }, 'The protocol'),
        ': how apps and agents connect and what they send (the AsyncAPI document).',
      ),
      h(
        'li',
        {},
        h('a', { href: '/docs/http/' }, 'The HTTP API'),
        ': the agent directory and the admin API this dashboard works through (the OpenAPI document).',
      ),
      h(
        'li',
        {},
        h('a', { href: '/healthz' }, '/healthz'),
        ' and ',
        h('a', { href: '/readyz' }, '/readyz'),
        ': the probes, no token needed.',
      ),
    ),
  );
}

function adminOffView() {
  main.append(
    heading('The admin API is off'),
    h(
      'p',
      {},
      'This bridge was started without ADMIN_TOKEN, so nobody can sign in and registration is closed. Restart it with an admin token of 16 characters or more, for example:',
    ),
    h('pre', {}, 'ADMIN_TOKEN=change-me-admin-token npm start'),
    h('p', {}, 'then reload this page and sign in with that token.'),
    aboutTheBridge(),
  );
}

document.getElementById('sign-out').addEventListener('click', async () => {
  try {
    await api.delete('/dashboard/session');
  } catch (err) {
    if (err.status !== 401) return announce(`Could not sign out: ${err.message}`, 'error');
  }
  signedOut('Signed out.');
});

whenSignedOut(
  () =>
    signedIn &&
    signedOut('Your session has ended (after 12 hours, or when the bridge restarted): sign in again.', 'error'),
);
window.addEventListener('hashchange', route);

api.get('/dashboard/session').then(signedInWith, (err) => {
  if (err.code === 'ADMIN_API_DISABLED') show(adminOffView);
  else signedOut(err.status === 401 ? '' : err.message, 'error');
});
