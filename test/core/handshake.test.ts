// Who a handshake is, from the raw facts a transport has: the path, the Authorization header and the query string.
import { expect } from 'chai';
import { ENDPOINT_PATHS } from '../../generated/index.js';
import { Directory, hashToken } from '../../src/core/directory.js';
import { authenticate, endpointOf, identify, type ConnectionFacts } from '../../src/core/handshake.js';
import { agentRecord } from '../helpers/core-harness.js';

const APP_TOKEN = 'rlk_classroom_' + 'a'.repeat(32);
const AGENT_TOKEN = 'rla_tutor_' + 'b'.repeat(32);
const OTHER_APP_TOKEN = 'rlk_retired_' + 'c'.repeat(32);

function directory(): Directory {
  const d = new Directory();
  d.addOrg({ org_id: 'org', name: 'Org', created_at: 0 });
  d.addApp({ app_id: 'classroom', org_id: 'org', name: 'Classroom', active: true, created_at: 0 });
  d.addApp({ app_id: 'retired', org_id: 'org', name: 'Retired', active: false, created_at: 0 });
  d.addAgent(agentRecord('tutor', { name: 'Tutor' }));
  for (const [token, kind, owner_id] of [
    [APP_TOKEN, 'app', 'classroom'],
    [AGENT_TOKEN, 'agent', 'tutor'],
    [OTHER_APP_TOKEN, 'app', 'retired'],
  ] as const) {
    d.addToken({ hash: hashToken(token), kind, owner_id, created_at: 0, expires_at: null });
  }
  return d;
}

const facts = (authorization: string | undefined, query = ''): ConnectionFacts => ({
  path: ENDPOINT_PATHS.app,
  authorization,
  query: new URLSearchParams(query),
  address: undefined,
});

describe('the handshake rules of the core', function () {
  it("knows the two endpoints by the spec's paths, and nothing else", function () {
    expect(endpointOf(ENDPOINT_PATHS.app)).to.equal('app');
    expect(endpointOf(ENDPOINT_PATHS.agent)).to.equal('agent');
    for (const path of ['/ws/app', '/v1/ws/app/', '/v1/ws/APP', '/'])
      expect(endpointOf(path), path).to.equal(undefined);
  });

  it('takes the Bearer header before ?token=, and ?token= when there is no header', function () {
    const d = directory();
    const both = identify(d, 'app', facts(`Bearer ${APP_TOKEN}`, `token=${OTHER_APP_TOKEN}`), 0);
    expect(both.ok && both.principal.kind === 'app' && both.principal.app.app_id).to.equal('classroom');
    const headerWrong = identify(d, 'app', facts('Bearer rlk_classroom_wrong', `token=${APP_TOKEN}`), 0);
    expect(headerWrong).to.include({ ok: false, code: 'UNAUTHORIZED' });
    const query = identify(d, 'app', facts(undefined, `token=${APP_TOKEN}`), 0);
    expect(query.ok).to.equal(true);
    expect(identify(d, 'app', facts(`Basic ${APP_TOKEN}`), 0)).to.include({ ok: false, code: 'UNAUTHORIZED' });
  });

  it("says what was wrong: no token, a deactivated owner, the other kind's endpoint (naming the right one)", function () {
    const d = directory();
    expect(identify(d, 'agent', facts(undefined), 0)).to.deep.equal({
      ok: false,
      code: 'UNAUTHORIZED',
      error: 'No token: send the agent token (rla_…) as Authorization: Bearer <token> or ?token=<token>.',
    });
    expect(identify(d, 'app', facts(`Bearer ${OTHER_APP_TOKEN}`), 0)).to.deep.equal({
      ok: false,
      code: 'TOKEN_REVOKED',
      error: "This token's app was deactivated.",
    });
    expect(identify(d, 'app', facts(`Bearer ${AGENT_TOKEN}`), 0)).to.deep.equal({
      ok: false,
      code: 'FORBIDDEN',
      error: `This endpoint takes app tokens (rlk_), not agent tokens. Use ${ENDPOINT_PATHS.agent}.`,
    });
  });

  it('answers the HTTP directory with the same rules and its own name', function () {
    const d = directory();
    expect(authenticate(d, AGENT_TOKEN, { kind: 'app', place: 'The directory' }, 0)).to.deep.equal({
      ok: false,
      code: 'FORBIDDEN',
      error: 'The directory takes app tokens (rlk_), not agent tokens.',
    });
    expect(authenticate(d, undefined, { kind: 'app', place: 'The directory' }, 0)).to.deep.include({
      code: 'UNAUTHORIZED',
      error: 'No token: send the app token (rlk_…) as Authorization: Bearer <token>.',
    });
  });
});
