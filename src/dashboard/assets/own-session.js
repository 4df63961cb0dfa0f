// Which dashboard session is this page's, as the audit trail names it (D10: a fingerprint the page cannot compute,
// since the session id stays in the HttpOnly cookie). The bridge records `dashboard.sign_in` before it answers the
// sign-in, and the session ends exactly DASHBOARD_SESSION_MS after it began: right after signing in, the newest
// entry is this page's sign-in; after a reload, it is the sign-in entry at `expires_at` less that length.
import { api } from './api.js';
import { DASHBOARD_SESSION_MS, FIELD_RULES } from './spec.js';

/** A second's slack for the two clock readings of one request; sign-ins closer than that are not told apart. */
const SLACK_MS = 1000;
let known; // { expiresAt, fingerprint }

const startOf = (session) => Date.parse(session.expires_at) - DASHBOARD_SESSION_MS;
const isSignIn = (entry, start) => entry.action === 'dashboard.sign_in' && Math.abs(Date.parse(entry.at) - start) <= SLACK_MS;

/** Called once this page has signed in, before it does anything else. */
export async function rememberSignIn(session) {
  try {
    const { entries } = await api.get('/admin/v1/audit?limit=1');
    const entry = entries[0];
    known = { expiresAt: session.expires_at, fingerprint: entry && isSignIn(entry, startOf(session)) ? entry.actor.session : undefined };
  } catch {
    known = undefined; // the audit page will look for it
  }
}

/** The fingerprint of this page's session, or undefined when the audit trail does not tell it apart. */
export async function ownSession() {
  const session = await api.get('/dashboard/session');
  if (known?.expiresAt !== session.expires_at) known = { expiresAt: session.expires_at, fingerprint: await signInAt(startOf(session)) };
  return known.fingerprint;
}

/** Reads the trail back from the newest entry to `start`; the sign-in then, if exactly one is closest to it. */
async function signInAt(start) {
  const near = [];
  for (let before = ''; ;) {
    const page = await api.get(`/admin/v1/audit?${new URLSearchParams({ limit: String(FIELD_RULES.pageMax), ...(before ? { before } : {}) })}`);
    for (const e of page.entries) if (isSignIn(e, start)) near.push({ off: Math.abs(Date.parse(e.at) - start), fingerprint: e.actor.session });
    if (!page.next_before || Date.parse(page.entries.at(-1).at) < start - SLACK_MS) break;
    before = String(page.next_before);
  }
  const best = Math.min(...near.map((n) => n.off));
  const closest = near.filter((n) => n.off === best);
  return closest.length === 1 ? closest[0].fingerprint : undefined;
}
