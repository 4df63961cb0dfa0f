// Finding registrations (D11): organizations, apps and agents listed a page at a time, sorted by id, with `q` a
// case-insensitive substring of the id or the name, and the next page's cursor in `next_after`.
import { expect } from 'chai';
import { QUERY_PARAMETERS } from '../../generated/index.js';
import { startTestBridge, type TestBridge } from '../helpers/bridge.js';

/** Every page of a listing, following next_after; returns the ids in order and the number of pages. */
async function allPages(
  bridge: TestBridge,
  path: string,
  key: string,
  id: string,
  schema: 'OrganizationList' | 'AppList' | 'AgentList',
  query: string,
) {
  const ids: string[] = [];
  let after: string | null = null;
  let pages = 0;
  do {
    const res = await bridge.http('GET', `${path}?${query}${after ? `&after=${after}` : ''}`, { schema });
    expect(res.status).to.equal(200);
    pages++;
    const items = res.body[key] as Record<string, string>[];
    ids.push(...items.map((item) => item[id]!));
    after = res.body.next_after;
    if (after !== null) expect(after).to.equal(items[items.length - 1]![id]);
  } while (after !== null && pages < 50);
  return { ids, pages };
}

describe('searching and paging the listings', function () {
  let bridge: TestBridge;
  beforeEach(async function () {
    bridge = await startTestBridge();
  });

  it('pages the organizations by org_id: every one once, in order, next_after null on the last page', async function () {
    const created = [];
    for (let i = 0; i < 7; i++) created.push((await bridge.org(`Org ${i}`)).org_id);
    const { ids, pages } = await allPages(
      bridge,
      '/admin/v1/organizations',
      'organizations',
      'org_id',
      'OrganizationList',
      'limit=3',
    );
    expect(ids).to.deep.equal([...created].sort());
    expect(pages).to.equal(3);

    const exact = await allPages(
      bridge,
      '/admin/v1/organizations',
      'organizations',
      'org_id',
      'OrganizationList',
      'limit=7',
    );
    expect(exact.pages, 'a page that holds the rest exactly is the last').to.equal(1);
  });

  it('lists the first page of the default size without parameters, and says where the next one starts', async function () {
    const size = QUERY_PARAMETERS.listOrganizations.limit.default;
    const ids = [];
    for (let i = 0; i <= size; i++)
      ids.push((await bridge.http('POST', '/admin/v1/organizations', { body: { name: `Bulk ${i}` } })).body.org_id);
    ids.sort();
    const first = await bridge.http('GET', '/admin/v1/organizations', { schema: 'OrganizationList' });
    expect(first.body.organizations.map((o: { org_id: string }) => o.org_id)).to.deep.equal(ids.slice(0, size));
    expect(first.body.next_after).to.equal(ids[size - 1]);
    const second = await bridge.http('GET', `/admin/v1/organizations?after=${first.body.next_after}`, {
      schema: 'OrganizationList',
    });
    expect(second.body.organizations.map((o: { org_id: string }) => o.org_id)).to.deep.equal([ids[size]]);
    expect(second.body.next_after).to.equal(null);
  });

  it('keeps the organizations whose id or name contains q, whatever the case, and pages within them', async function () {
    const acme = await bridge.org('Acme Learning');
    const beta = await bridge.org('Beta ACME Partners');
    await bridge.org('Gamma School');
    const byName = await allPages(
      bridge,
      '/admin/v1/organizations',
      'organizations',
      'org_id',
      'OrganizationList',
      'q=aCmE&limit=1',
    );
    expect(byName.ids).to.deep.equal([acme.org_id, beta.org_id].sort());
    expect(byName.pages).to.equal(2);
    const byId = await bridge.http('GET', `/admin/v1/organizations?q=${beta.org_id.slice(-6).toUpperCase()}`, {
      schema: 'OrganizationList',
    });
    expect(byId.body.organizations.map((o: { org_id: string }) => o.org_id)).to.deep.equal([beta.org_id]);
    const none = await bridge.http('GET', '/admin/v1/organizations?q=zzz', { schema: 'OrganizationList' });
    expect(none.body).to.deep.equal({ organizations: [], next_after: null });
  });

  it("searches and pages an organization's apps and agents, and never another organization's", async function () {
    const org = await bridge.org();
    const other = await bridge.org('Other');
    const apps = [
      await bridge.app(org.org_id, 'Classroom iOS'),
      await bridge.app(org.org_id, 'Classroom Android'),
      await bridge.app(org.org_id, 'Grading'),
    ];
    await bridge.app(other.org_id, 'Classroom Web');
    const agents = [
      await bridge.agent(org.org_id, 'Maths Tutor'),
      await bridge.agent(org.org_id, 'Physics Tutor'),
      await bridge.agent(org.org_id, 'Grader'),
    ];
    await bridge.agent(other.org_id, 'Tutor Elsewhere');

    const classroom = await allPages(
      bridge,
      `/admin/v1/organizations/${org.org_id}/apps`,
      'apps',
      'app_id',
      'AppList',
      'q=classroom&limit=1',
    );
    expect(classroom.ids).to.deep.equal([apps[0]!.app_id, apps[1]!.app_id].sort());
    const allApps = await allPages(
      bridge,
      `/admin/v1/organizations/${org.org_id}/apps`,
      'apps',
      'app_id',
      'AppList',
      'limit=2',
    );
    expect(allApps.ids).to.deep.equal(apps.map((a) => a.app_id).sort());
    const tutors = await allPages(
      bridge,
      `/admin/v1/organizations/${org.org_id}/agents`,
      'agents',
      'agent_id',
      'AgentList',
      'q=TUTOR&limit=1',
    );
    expect(tutors.ids).to.deep.equal([agents[0]!.agent_id, agents[1]!.agent_id].sort());
    expect(tutors.pages).to.equal(2);
  });

  it('answers 400 INVALID_REQUEST naming the parameter for a bad q, limit or after, and 404 for an unknown organization', async function () {
    const org = await bridge.org();
    const { maximum, minimum } = QUERY_PARAMETERS.listOrganizations.limit;
    const cases: [path: string, error: RegExp][] = [
      [`/admin/v1/organizations?limit=${maximum + 1}`, /limit/],
      [`/admin/v1/organizations?limit=${minimum - 1}`, /limit/],
      ['/admin/v1/organizations?limit=ten', /limit/],
      [`/admin/v1/organizations?q=${'q'.repeat(QUERY_PARAMETERS.listOrganizations.q.maxLength + 1)}`, /^q:/],
      ['/admin/v1/organizations?q=', /^q:/],
      ['/admin/v1/organizations?after=Not_An_Id', /^after:/],
      [`/admin/v1/organizations/${org.org_id}/apps?limit=0`, /limit/],
      [`/admin/v1/organizations/${org.org_id}/apps?after=a%20b`, /^after:/],
      [`/admin/v1/organizations/${org.org_id}/agents?q=a&q=b`, /^q:/],
    ];
    for (const [path, error] of cases) {
      const res = await bridge.http('GET', path);
      expect(res.status, path).to.equal(400);
      expect(res.body.code, path).to.equal('INVALID_REQUEST');
      expect(res.body.error, path).to.match(error);
    }
    for (const path of [
      '/admin/v1/organizations/nope-abc123/apps?q=x',
      '/admin/v1/organizations/nope-abc123/agents?limit=5',
    ]) {
      const res = await bridge.http('GET', path);
      expect(res.status, path).to.equal(404);
      expect(res.body.code).to.equal('NOT_FOUND');
    }
  });
});
