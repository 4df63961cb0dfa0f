// The two pages of docs/ name each other: the protocol (spec/asyncapi.yaml, docs/index.html) and the HTTP API
// (spec/openapi.yaml, docs/http/index.html), in a bar of the same look on both (docs/nav.css).
type PageName = 'protocol' | 'http';

const PAGES: readonly { name: PageName; label: string; title: string; path: string }[] = [
  {
    name: 'protocol',
    label: 'WebSocket protocol',
    title: 'The WebSocket endpoints: messages, error codes, close codes and limits (spec/asyncapi.yaml)',
    path: '',
  },
  {
    name: 'http',
    label: 'HTTP API',
    title: 'The agent directory, health, the dashboard session and the admin API (spec/openapi.yaml)',
    path: 'http/',
  },
];

/** The bar as `current` shows it: links relative to that page, the page itself marked. */
export function navigation(current: PageName): string {
  const root = current === 'protocol' ? '' : '../';
  const links = PAGES.map((p) =>
    p.name === current
      ? `<a href="${root}${p.path}" title="${p.title}" aria-current="page">${p.label}</a>`
      : `<a href="${root}${p.path}" title="${p.title}">${p.label}</a>`,
  );
  return `<nav class="bridge-docs-nav" aria-label="Agent Messaging Bridge documentation">${links.join('')}</nav>`;
}

/** Its style sheet, docs/nav.css: fixed in a corner, above either renderer's page, which it does not restyle. */
export const NAV_CSS = `.bridge-docs-nav {
  position: fixed;
  top: 8px;
  right: 8px;
  z-index: 1000;
  display: flex;
  border-radius: 6px;
  overflow: hidden;
  box-shadow: 0 1px 4px rgba(0, 0, 0, 0.35);
  font: 600 13px/1.2 system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif;
}
.bridge-docs-nav a {
  padding: 7px 12px;
  background: #f3f4f6;
  color: #1f2937;
  text-decoration: none;
}
.bridge-docs-nav a:hover,
.bridge-docs-nav a:focus-visible {
  background: #e5e7eb;
  text-decoration: underline;
}
.bridge-docs-nav a[aria-current='page'] {
  background: #1f2937;
  color: #fff;
}
`;

/** docs/index.html as the AsyncAPI template wrote it, with the bar and its style sheet. */
export function withNavigation(asyncApiPage: string): string {
  const head = asyncApiPage.indexOf('</head>');
  const body = asyncApiPage.indexOf('<body>');
  if (head < 0 || body < 0) throw new Error('docs/index.html: no </head> or <body> to put the navigation in');
  const link = '<link href="nav.css" rel="stylesheet">\n';
  const bar = `\n${navigation('protocol')}`;
  // The bar goes before the template's root element: React hydrates that element only.
  return (
    asyncApiPage.slice(0, head) +
    link +
    asyncApiPage.slice(head, body + '<body>'.length) +
    bar +
    asyncApiPage.slice(body + '<body>'.length)
  );
}
