// `npm run docs`, its HTTP half: spec/openapi.yaml -> docs/http/, rendered in the browser by Redoc's standalone
// bundle (redoc 2, installed in tools/docs/ beside the AsyncAPI template). Why this renderer: the standalone bundle is
// one 1 MB script with everything inside, so the page loads nothing but its own four files; `@redocly/cli build-docs`
// would bring Redoc too and more besides, its page loads Redoc from Redocly's CDN unless told otherwise, and it runs
// the spec from an inline script, which the docs' Content-Security-Policy would have to allow.
import { copyFileSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { navigation } from './docs-nav.js';
import { OPENAPI_FILE } from './docs-digest.js';

interface OpenApiCore {
  createConfig(raw: object): Promise<unknown>;
  bundle(opts: { ref: string; config: unknown }): Promise<{
    bundle: { parsed: { info: { title: string; version: string } } };
    problems: { severity: string; message: string }[];
  }>;
}

/** What the bundle would load from outside at run time, and what it gets instead. */
const OUTSIDE_LOADS: readonly (readonly [string, string])[] = [
  // The "API docs by Redocly" link's logo: an image on Redocly's CDN. An empty image fails at once, and Redoc then
  // shows the link without it.
  ['https://cdn.redoc.ly/redoc/logo-mini.svg', 'data:,'],
];

const escapeHtml = (text: string) =>
  text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');

/** The page: our navigation, then Redoc's element, filled by init.js once redoc.standalone.js has loaded. */
function page(title: string): string {
  return `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>${escapeHtml(title)}</title>
    <link rel="stylesheet" href="../nav.css">
  </head>
  <body>
    ${navigation('http')}
    <div id="redoc"><noscript>This page needs JavaScript. The document it shows is <a href="openapi.json">openapi.json</a>.</noscript></div>
    <script src="redoc.standalone.js"></script>
    <script src="init.js"></script>
  </body>
</html>
`;
}

// A file of its own rather than an inline script: the docs' Content-Security-Policy allows scripts of the bridge only.
const INIT = `// Renders openapi.json (spec/openapi.yaml, its references to asyncapi.yaml bundled in) with Redoc.
Redoc.init(
  'openapi.json',
  { expandResponses: '200,201', jsonSampleExpandLevel: 3, pathInMiddlePanel: true, sortTagsAlphabetically: false },
  document.getElementById('redoc'),
);
`;

/** Writes docs/http/ into `out` (the rendered docs/ directory). */
export async function renderHttpDocs(tools: string, out: string): Promise<void> {
  const require = createRequire(join(tools, 'package.json'));
  const core = require('@redocly/openapi-core') as OpenApiCore;
  // Bundled: the schemas it takes from asyncapi.yaml become components of the one document the browser loads.
  const { bundle, problems } = await core.bundle({ ref: OPENAPI_FILE, config: await core.createConfig({}) });
  const errors = problems.filter((p) => p.severity === 'error');
  if (errors.length) throw new Error(`spec/openapi.yaml: ${errors.map((p) => p.message).join('; ')}`);
  const spec = bundle.parsed;
  const dir = join(out, 'http');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'openapi.json'), `${JSON.stringify(spec, null, 2)}\n`);
  writeFileSync(join(dir, 'index.html'), page(`${spec.info.title} ${spec.info.version} documentation`));
  writeFileSync(join(dir, 'init.js'), INIT);
  let script = readFileSync(require.resolve('redoc/bundles/redoc.standalone.js'), 'utf8');
  for (const [outside, instead] of OUTSIDE_LOADS) {
    if (!script.includes(outside))
      throw new Error(`redoc.standalone.js no longer loads ${outside}: check OUTSIDE_LOADS`);
    script = script.replaceAll(outside, instead);
  }
  // Its source map is not shipped; without the comment, a browser's developer tools do not ask for it.
  writeFileSync(join(dir, 'redoc.standalone.js'), script.replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n'));
  copyFileSync(
    require.resolve('redoc/bundles/redoc.standalone.js.LICENSE.txt'),
    join(dir, 'redoc.standalone.js.LICENSE.txt'),
  );
}
