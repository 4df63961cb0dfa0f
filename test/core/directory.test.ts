import { expect } from 'chai';
import { Directory, hashToken, parseToken } from '../../src/core/directory.js';
import { agentRecord } from '../helpers/core-harness.js';

const SECRET = 'A'.repeat(43);
const APP_TOKEN = `rlk_classroom_${SECRET}`;
const AGENT_TOKEN = `rla_tutor_${SECRET}`;

function directory(): Directory {
  const d = new Directory();
  d.addOrg({ org_id: 'org', name: 'Org', created_at: 0 });
  d.addApp({ app_id: 'classroom', org_id: 'org', name: 'Classroom', active: true, created_at: 0 });
  d.addAgent(agentRecord('tutor', { name: 'Tutor' }));
  d.addToken({ hash: hashToken(APP_TOKEN), kind: 'app', owner_id: 'classroom', created_at: 0, expires_at: null });
  d.addToken({ hash: hashToken(AGENT_TOKEN), kind: 'agent', owner_id: 'tutor', created_at: 0, expires_at: null });
  return d;
}

describe('the directory', function () {
  it('parses both token forms and nothing else', function () {
    expect(parseToken(APP_TOKEN)).to.deep.equal({ kind: 'app', ownerId: 'classroom' });
    expect(parseToken(AGENT_TOKEN)).to.deep.equal({ kind: 'agent', ownerId: 'tutor' });
    for (const bad of [
      '',
      'rlk_',
      `rlk_Classroom_${SECRET}`,
      `rlk_classroom_${'A'.repeat(31)}`,
      `rlx_classroom_${SECRET}`,
      `rlk_class_room_${SECRET}`,
    ]) {
      expect(parseToken(bad), bad).to.equal(undefined);
    }
  });

  it('authenticates by hash, and tells apps from agents', function () {
    const d = directory();
    const app = d.authenticate(APP_TOKEN, 0);
    expect(app.ok && app.principal.kind).to.equal('app');
    const agent = d.authenticate(AGENT_TOKEN, 0);
    expect(agent.ok && agent.principal.kind).to.equal('agent');
  });

  it('answers UNAUTHORIZED for a wrong secret, an unknown owner and a token of the other kind with the same id', function () {
    const d = directory();
    for (const token of [`rlk_classroom_${'B'.repeat(43)}`, `rlk_nobody_${SECRET}`, `rla_classroom_${SECRET}`]) {
      expect(d.authenticate(token, 0), token).to.deep.equal({ ok: false, code: 'UNAUTHORIZED' });
    }
  });

  it('answers UNAUTHORIZED once a rotated-out token expires, and TOKEN_REVOKED for a deactivated owner', function () {
    const d = directory();
    const old = `rlk_classroom_${'C'.repeat(43)}`;
    d.addToken({ hash: hashToken(old), kind: 'app', owner_id: 'classroom', created_at: 0, expires_at: 1_000 });
    expect(d.authenticate(old, 999).ok).to.equal(true);
    expect(d.authenticate(old, 1_000)).to.deep.equal({ ok: false, code: 'UNAUTHORIZED' });
    d.apps.get('classroom')!.active = false;
    expect(d.authenticate(APP_TOKEN, 0)).to.deep.equal({ ok: false, code: 'TOKEN_REVOKED' });
  });

  it('hides agents of other organizations and deactivated agents, and applies allowlists', function () {
    const d = directory();
    const app = d.apps.get('classroom')!;
    d.addOrg({ org_id: 'other', name: 'Other', created_at: 0 });
    d.addAgent(agentRecord('foreign', { org_id: 'other', name: 'F' }));
    expect(d.agentFor(app, 'foreign')).to.equal(undefined);
    const tutor = d.agentFor(app, 'tutor')!;
    expect(d.mayUse(app, tutor)).to.equal(true);
    d.setAllowlist('tutor', ['someone-else']);
    expect(d.mayUse(app, tutor)).to.equal(false);
    d.setAllowlist('tutor', []);
    expect(d.mayUse(app, tutor)).to.equal(false);
    tutor.active = false;
    expect(d.agentFor(app, 'tutor')).to.equal(undefined);
  });
});
