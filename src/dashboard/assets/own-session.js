// Which dashboard session is this page's, as the audit trail names it (D10): the bridge tells the page its
// session's fingerprint (DashboardSession.fingerprint), since the session id itself stays in the HttpOnly cookie.
import { api } from './api.js';

/** The fingerprint of this page's session; read again each time, as the page may have signed in anew meanwhile. */
export async function ownSession() {
  return (await api.get('/dashboard/session')).fingerprint;
}
