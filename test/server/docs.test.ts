// GET /docs/ and /docs/http/: the HTML documentation of the protocol and of the HTTP API, served by the bridge from
// docs/ (rendered by `npm run docs`), each page linking the other and loading nothing from anywhere else.
import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { parse } from 'yaml';
import { startTestBridge, stopAll } from '../helpers/bridge.js';

const DOCS = new URL('../../docs/', import.meta.url);

/** The `src` and `href` of what a page loads itself: scripts, style sheets, icons, images; links are not loads. */
const loadedBy = (page: string) =>
  [...page.matchAll(/<(?:script|link|img)\b[^>]*?\s(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);

describe('the documentation at /docs and /docs/http', function () {
  after(stopAll);

  it('redirects /docs to /docs/, whose page shows every message and operation of spec/asyncapi.yaml', async function () {
    const bridge = await startTestBridge();
    const redirect = await fetch(new URL('/docs', bridge.url), { redirect: 'manual' });
    expect(redirect.status).to.equal(302);
    expect(redirect.headers.get('location')).to.equal('/docs/');
    const res = await fetch(new URL('/docs/', bridge.url));
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/html/);
    const page = await res.text();
    expect(page).to.match(/<title>Agent Messaging Bridge [^<]* documentation<\/title>/);
    const spec = parse(readFileSync(new URL('../../spec/asyncapi.yaml', import.meta.url), 'utf8')) as {
      components: { messages: Record<string, { title: string }> };
      operations: Record<string, unknown>;
    };
    for (const message of Object.values(spec.components.messages)) expect(page).to.include(message.title);
    for (const operation of Object.keys(spec.operations)) expect(page).to.include(operation);
  });

  it('serves every script and style sheet the page loads, with its content type, and nothing outside docs/', async function () {
    const bridge = await startTestBridge();
    const page = await (await fetch(new URL('/docs/', bridge.url))).text();
    const loaded = [...page.matchAll(/(?:src|href)="((?:js|css)\/[^"]+)"/g)].map((m) => m[1]!);
    expect(loaded).to.have.length.greaterThan(2);
    for (const file of loaded) {
      const res = await fetch(new URL(`/docs/${file}`, bridge.url));
      expect(res.status, file).to.equal(200);
      expect(res.headers.get('content-type'), file).to.match(file.endsWith('.js') ? /^text\/javascript/ : /^text\/css/);
      expect(res.headers.get('x-content-type-options')).to.equal('nosniff');
    }
    for (const path of ['/docs/spec-digest.txt', '/docs/..%2Fpackage.json', '/docs/js/nothing.js']) {
      const res = await fetch(new URL(path, bridge.url));
      expect(res.status, path).to.equal(404);
      expect(((await res.json()) as { code: string }).code).to.equal('NOT_FOUND');
    }
  });

  it('serves the HTTP API at /docs/http/: the page, the Redoc script and the bundled document with every operation, under a CSP that allows only the bridge', async function () {
    const bridge = await startTestBridge();
    const redirect = await fetch(new URL('/docs/http', bridge.url), { redirect: 'manual' });
    expect(redirect.status).to.equal(302);
    expect(redirect.headers.get('location')).to.equal('/docs/http/');
    const res = await fetch(new URL('/docs/http/', bridge.url));
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/html/);
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).to.include("default-src 'self'").and.include("script-src 'self';").and.not.include('unsafe-eval');
    expect(res.headers.get('x-frame-options')).to.equal('DENY');
    const page = await res.text();
    const spec = parse(readFileSync(new URL('../../spec/openapi.yaml', import.meta.url), 'utf8')) as {
      info: { title: string; version: string };
      paths: Record<string, Record<string, { operationId?: string }>>;
    };
    expect(page).to.include(`<title>${spec.info.title} ${spec.info.version} documentation</title>`);
    expect(page).to.include('<a href="../" title=').and.include('WebSocket protocol</a>');
    expect(loadedBy(page)).to.deep.equal(['../nav.css', 'redoc.standalone.js', 'init.js']);
    for (const file of loadedBy(page)) {
      const asset = await fetch(new URL(file, new URL('/docs/http/', bridge.url)));
      expect(asset.status, file).to.equal(200);
      expect(asset.headers.get('content-type'), file).to.match(
        file.endsWith('.js') ? /^text\/javascript/ : /^text\/css/,
      );
    }
    expect(await (await fetch(new URL('/docs/http/init.js', bridge.url))).text()).to.include("'openapi.json'");

    const document = await fetch(new URL('/docs/http/openapi.json', bridge.url));
    expect(document.headers.get('content-type')).to.match(/^application\/json/);
    const bundled = (await document.json()) as typeof spec & { components: { schemas: Record<string, unknown> } };
    expect(bundled.info.title).to.equal(spec.info.title);
    const operations = (paths: typeof spec.paths) =>
      Object.values(paths).flatMap((item) => Object.values(item).flatMap((op) => op.operationId ?? []));
    expect(operations(bundled.paths)).to.deep.equal(operations(spec.paths)).and.include('disconnectConnection');
    // asyncapi.yaml's schemas are bundled in: the browser reads one document.
    expect(JSON.stringify(bundled)).not.to.include('asyncapi.yaml#');
    expect(bundled.components.schemas).to.include.keys('AgentId', 'ErrorCode');
  });

  it('links the HTTP API from the protocol page, whose script alone may evaluate code', async function () {
    const bridge = await startTestBridge();
    const res = await fetch(new URL('/docs/', bridge.url));
    expect(res.headers.get('content-security-policy')).to.include("default-src 'self'").and.include("'unsafe-eval'");
    const page = await res.text();
    expect(page).to.include('<a href="http/" title=').and.include('HTTP API</a>');
    expect(loadedBy(page)).to.include('nav.css');
    expect((await fetch(new URL('/docs/nav.css', bridge.url))).status).to.equal(200);
  });

  it('has no page, style sheet or script in docs/ that loads anything from a CDN or a font server', function () {
    const files = readdirSync(DOCS, { recursive: true, encoding: 'utf8' }).filter((f) =>
      ['.html', '.css', '.js'].includes(extname(f)),
    );
    expect(files).to.include.members(['index.html', 'http/index.html', 'http/redoc.standalone.js', 'js/app.js']);
    for (const file of files) {
      const text = readFileSync(new URL(file, DOCS), 'utf8');
      if (file.endsWith('.html')) for (const url of loadedBy(text)) expect(url, file).not.to.match(/^(https?:)?\/\//);
      expect(text, file).not.to.match(/url\(\s*['"]?(https?:)?\/\//);
      expect(text, file).not.to.match(/@import\s+(url\()?['"]?(https?:)?\/\//);
      for (const host of ['cdn.', 'fonts.googleapis.com', 'fonts.gstatic.com', 'unpkg.com', 'jsdelivr.net'])
        expect(text, `${file}: ${host}`).not.to.include(host);
    }
  });
});
