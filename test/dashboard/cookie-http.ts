// HTTP as a browser sends it to the dashboard: the session cookie, the X-CSRF-Token header and an Origin. Bodies
// are checked against the generated schemas like bridge.http does, so an answer that breaks the spec fails.
import { expect } from 'chai';
import { validators } from '../../generated/index.js';
import { ADMIN_TOKEN, type TestBridge } from '../helpers/bridge.js';

export interface BrowserRequest {
  body?: unknown;
  cookie?: string;
  csrf?: string;
  origin?: string;
  bearer?: string;
  schema?: keyof typeof validators;
}

export interface Answer {
  status: number;
  body: any;
  headers: Headers;
}

/** Where to send: a test bridge, or a real `bridge serve` process. */
type Target = Pick<TestBridge, 'url'>;

export async function send(
  bridge: Target,
  method: string,
  path: string,
  options: BrowserRequest = {},
): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (options.cookie) headers.cookie = options.cookie;
  if (options.csrf) headers['x-csrf-token'] = options.csrf;
  if (options.origin) headers.origin = options.origin;
  if (options.bearer) headers.authorization = `Bearer ${options.bearer}`;
  const response = await fetch(new URL(path, bridge.url), {
    method,
    headers,
    redirect: 'manual',
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
  });
  const text = await response.text();
  const isJson = response.headers.get('content-type')?.startsWith('application/json');
  const body = isJson && text ? JSON.parse(text) : text;
  const check = response.ok
    ? options.schema
      ? validators[options.schema]
      : undefined
    : isJson
      ? validators.HttpError
      : undefined;
  if (check && !check(body))
    throw new Error(`${method} ${path} answered an invalid body ${text}: ${JSON.stringify(check.errors)}`);
  return { status: response.status, body, headers: response.headers };
}

export interface SignedIn {
  cookie: string;
  csrf: string;
  setCookie: string;
  expiresAt: string;
}

/** Signs in as the page does and returns the cookie to send back and the CSRF token. */
export async function signIn(bridge: Target, extra: BrowserRequest = {}): Promise<SignedIn> {
  const res = await send(bridge, 'POST', '/dashboard/session', {
    body: { admin_token: ADMIN_TOKEN },
    origin: bridge.url,
    schema: 'DashboardSession',
    ...extra,
  });
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  const setCookie = res.headers.get('set-cookie') ?? '';
  const cookie = setCookie.split(';')[0]!;
  return { cookie, csrf: res.body.csrf_token, setCookie, expiresAt: res.body.expires_at };
}
