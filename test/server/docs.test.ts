// GET /docs/: the protocol's HTML documentation, served by the bridge from docs/ (rendered by `npm run docs`).
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { startTestBridge, stopAll } from '../helpers/bridge.js';

describe('the protocol documentation at /docs', function () {
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
});
