// Which dashboard session is this page's, as the audit trail names it (D10: a fingerprint the page cannot compute,
// since the session id stays in the HttpOnly cookie). The bridge records `dashboard.sign_in` the moment a session
// begins, and the session ends exactly DASHBOARD_SESSION_MS later: the sign-in entry at `expires_at` less that
// length is this page's own.
import { api } from './api.js';
import { DASHBOARD_SESSION_MS, FIELD_RULES } from './spec.js';

/** Clocks agree to the millisecond in one request; a second's slack still tells sign-ins apart in practice. */
const SLACK_MS = 1000;
let known; // { expiresAt, fingerprint }

/** The fingerprint of this page's session, or undefined when the audit trail does not tell it apart. */
export async function ownSession() {
  const { expires_at } = await api.get('/dashboard/session');
  if (known?.expiresAt !== expires_at) known = { expiresAt: expires_at, fingerprint: await signInOf(Date.parse(expires_at) - DASHBOARD_SESSION_MS) };
  return known.fingerprint;
}

/** Reads the trail back from the newest entry to the sign-in at `start`; undefined unless exactly one is closest. */
async function signInOf(start) {
  const near = [];
  for (let before = ''; ;) {
    const page = await api.get(`/admin/v1/audit?${new URLSearchParams({ limit: String(FIELD_RULES.pageMax), ...(before ? { before } : {}) })}`);
    for (const e of page.entries) {
      const off = Math.abs(Date.parse(e.at) - start);
      if (e.action === 'dashboard.sign_in' && off <= SLACK_MS) near.push({ off, fingerprint: e.actor.session });
    }
    const oldest = page.entries.at(-1);
    if (!page.next_before || Date.parse(oldest.at) < start - SLACK_MS) break;
    before = String(page.next_before);
  }
  const best = Math.min(...near.map((n) => n.off));
  const closest = near.filter((n) => n.off === best);
  return closest.length === 1 ? closest[0].fingerprint : undefined;
}
