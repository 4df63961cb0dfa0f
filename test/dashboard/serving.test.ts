// Serving the dashboard (spec/openapi.yaml /dashboard, D5): the page and its files with their types and security
// headers, the form rules it validates by (equal to the spec's), and the `online` status of apps it shows.
import { readdirSync, readFileSync } from 'node:fs';
import { expect } from 'chai';
import { FIELD_RULES } from '../../src/dashboard/assets.js';
import { disconnect, startTestBridge } from '../helpers/bridge.js';
import { asyncapi, openapi } from '../helpers/raw-spec.js';
import { send } from './cookie-http.js';

const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";
const ASSETS = new URL('../../src/dashboard/assets/', import.meta.url);

function expectSecurityHeaders(headers: Headers, what: string): void {
  expect(headers.get('content-security-policy'), what).to.equal(CSP);
  expect(headers.get('x-content-type-options'), what).to.equal('nosniff');
  expect(headers.get('referrer-policy'), what).to.equal('no-referrer');
}

describe('dashboard page and files', function () {
  it('serves the page uncached with the security headers, and every file it loads with its content type', async function () {
    const bridge = await startTestBridge();
    const page = await send(bridge, 'GET', '/dashboard');
    expect(page.status).to.equal(200);
    expect(page.headers.get('content-type')).to.equal('text/html; charset=utf-8');
    expect(page.headers.get('cache-control')).to.equal('no-store');
    expectSecurityHeaders(page.headers, 'the page');
    expect(page.body).to.include('<script type="module" src="/dashboard/assets/dashboard.js"></script>');

    // Every file the page or a module names is served, with the type a browser requires under nosniff.
    const pending = [...(page.body as string).matchAll(/(?:src|href)="\/dashboard\/assets\/([\w.-]+)"/g)].map(
      (m) => m[1]!,
    );
    const seen = new Set<string>();
    while (pending.length) {
      const file = pending.pop()!;
      if (seen.has(file)) continue;
      seen.add(file);
      const res = await send(bridge, 'GET', `/dashboard/assets/${file}`);
      expect(res.status, file).to.equal(200);
      const type = file.endsWith('.css')
        ? 'text/css; charset=utf-8'
        : file.endsWith('.svg')
          ? 'image/svg+xml'
          : 'text/javascript; charset=utf-8';
      expect(res.headers.get('content-type'), file).to.equal(type);
      expectSecurityHeaders(res.headers, file);
      for (const m of (res.body as string).matchAll(/from '\.\/([\w.-]+)'/g)) pending.push(m[1]!);
    }
    const shipped = readdirSync(ASSETS).filter((f) => f !== 'index.html');
    expect([...seen].sort()).to.deep.equal([...shipped, 'spec.js'].sort());

    const missing = await send(bridge, 'GET', '/dashboard/assets/nope.js');
    expect(missing.status).to.equal(404);
    expect(missing.body.code).to.equal('NOT_FOUND');
    expectSecurityHeaders(missing.headers, 'a missing file');
    const slash = await send(bridge, 'GET', '/dashboard/');
    expect(slash.status, 'the page at /dashboard/ too (its files have absolute paths)').to.equal(200);
    expect(slash.body).to.equal(page.body);
  });

  it('serves its icon at /favicon.ico too, the SVG the page links, with the same headers', async function () {
    const bridge = await startTestBridge();
    const page = await send(bridge, 'GET', '/dashboard');
    expect(page.body).to.match(
      /<link rel="icon" href="\/dashboard\/assets\/favicon\.svg" type="image\/svg\+xml"\s*\/?>/,
    );
    const linked = await send(bridge, 'GET', '/dashboard/assets/favicon.svg');
    const icon = await send(bridge, 'GET', '/favicon.ico');
    expect(icon.status).to.equal(200);
    expect(icon.headers.get('content-type')).to.equal('image/svg+xml');
    expectSecurityHeaders(icon.headers, '/favicon.ico');
    expect(icon.body)
      .to.equal(linked.body)
      .and.equal(readFileSync(new URL('favicon.svg', ASSETS), 'utf8'));
    expect(icon.body)
      .to.match(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/)
      .and.not.match(/<script|\son\w+=/);
  });

  it('serves the page even when the admin API is off (the page then says so)', async function () {
    const bridge = await startTestBridge({ adminToken: undefined });
    const page = await send(bridge, 'GET', '/dashboard');
    expect(page.status).to.equal(200);
    expectSecurityHeaders(page.headers, 'the page');
  });

  it('has no inline script or style and never parses strings as HTML', function () {
    const html = readFileSync(new URL('index.html', ASSETS), 'utf8');
    expect(html).not.to.match(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.to.match(/<style|\sstyle=|\son\w+=/);
    for (const file of readdirSync(ASSETS).filter((f) => f.endsWith('.js'))) {
      const code = readFileSync(new URL(file, ASSETS), 'utf8');
      expect(code, file).not.to.match(
        /innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|localStorage|sessionStorage/,
      );
    }
  });

  it('validates forms by the rules of spec/openapi.yaml and asyncapi.yaml', async function () {
    const schemas = openapi.components.schemas;
    for (const name of [
      'OrganizationCreate',
      'AppCreate',
      'AgentCreate',
      'OrganizationUpdate',
      'AppUpdate',
      'AgentUpdate',
    ])
      expect(schemas[name].properties.name.maxLength, name).to.equal(FIELD_RULES.nameMaxLength);
    const agent = schemas.AgentCreate.properties;
    for (const { properties: fields } of [schemas.AgentCreate, schemas.AgentUpdate]) {
      expect(fields.description.maxLength).to.equal(FIELD_RULES.descriptionMaxLength);
      expect([fields.ttl_days.minimum, fields.ttl_days.maximum]).to.deep.equal([
        FIELD_RULES.ttlDaysMin,
        FIELD_RULES.ttlDaysMax,
      ]);
    }
    const parameters = (path: string) =>
      Object.fromEntries(
        openapi.paths[path].get.parameters.filter((p: any) => p.in === 'query').map((p: any) => [p.name, p.schema]),
      );
    for (const path of [
      '/admin/v1/organizations',
      '/admin/v1/organizations/{org_id}/apps',
      '/admin/v1/organizations/{org_id}/agents',
    ]) {
      expect(parameters(path).q.maxLength, path).to.equal(FIELD_RULES.searchMaxLength);
      expect(parameters(path).limit.maximum, path).to.equal(FIELD_RULES.pageMax);
    }
    for (const path of ['/admin/v1/sessions', '/admin/v1/audit'])
      expect(parameters(path).limit.maximum, path).to.equal(FIELD_RULES.pageMax);
    expect(asyncapi.components.schemas.AppId.pattern).to.equal(FIELD_RULES.idPattern);
    expect(asyncapi.components.schemas.AppId.maxLength).to.equal(FIELD_RULES.idMaxLength);
    expect(asyncapi.components.schemas.ThreadId.pattern).to.equal(FIELD_RULES.threadIdPattern);
    expect(asyncapi.components.schemas.ThreadId.maxLength).to.equal(FIELD_RULES.threadIdMaxLength);

    const bridge = await startTestBridge();
    const spec = await send(bridge, 'GET', '/dashboard/assets/spec.js');
    expect(spec.body).to.include(`"ttlDaysDefault":${agent.ttl_days.default}`);
    expect(spec.body).to.include(`"overviewSampleMs":${asyncapi['x-limits'].overviewSampleMs.value}`);
    expect(spec.body)
      .to.include('"PERMISSION_DENIED"')
      .and.include('"AGENT_OFFLINE"')
      .and.not.include('"ADMIN_API_DISABLED"');
  });

  it('lists an app online while one of its instances is connected', async function () {
    const bridge = await startTestBridge();
    const org = await bridge.org();
    const app = await bridge.app(org.org_id);
    const other = await bridge.app(org.org_id, 'Other App');
    const online = async () => {
      const { body } = await bridge.http('GET', `/admin/v1/organizations/${org.org_id}/apps`, { schema: 'AppList' });
      return Object.fromEntries(body.apps.map((a: { app_id: string; online: boolean }) => [a.app_id, a.online]));
    };
    expect(app.online).to.equal(false);
    expect(await online()).to.deep.equal({ [app.app_id]: false, [other.app_id]: false });

    const first = await bridge.connectApp(app.token);
    const second = await bridge.connectApp(app.token);
    await first.expectNothingBeforePong();
    await second.expectNothingBeforePong();
    expect(await online()).to.deep.equal({ [app.app_id]: true, [other.app_id]: false });
    first.close();
    await first.waitForClose();
    for (let i = 0; i < 200 && bridge.bridge.stats().apps !== 1; i++)
      await new Promise((resolve) => setTimeout(resolve, 5));
    expect(bridge.bridge.stats().apps).to.equal(1);
    expect((await online())[app.app_id], 'one instance left').to.equal(true);
    await disconnect(bridge, second);
    expect(await online()).to.deep.equal({ [app.app_id]: false, [other.app_id]: false });
  });
});
