// The bridge under test, over HTTP: provisioning through its admin API, its test clock if it has one, and raw
// calls that scenarios make (directory, admin actions). Every answer is checked against spec/openapi.yaml.
import { validators, type Validator } from '../generated/index.js';

export interface TargetOptions {
  /** `ws[s]://host[:port]/v1` */
  url: string;
  /** `http[s]://host[:port]` (the admin routes are under /admin/v1). */
  adminUrl: string;
  adminToken: string | undefined;
  timeoutMs: number;
}

export interface HttpAnswer {
  status: number;
  body: any;
}

export class Target {
  constructor(readonly options: TargetOptions) {}

  /** The HTTP base of the `/v1` paths (the directory): the ws URL with an http scheme. */
  get v1Base(): string {
    return this.options.url.replace(/^ws/, 'http').replace(/\/$/, '');
  }

  async call(method: string, url: string, token: string | undefined, body?: unknown): Promise<HttpAnswer> {
    const response = await fetch(url, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(this.options.timeoutMs * 5),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // left as text; a schema check below reports it
    }
    if (!response.ok && !validators.HttpError(parsed)) {
      throw new Error(`${method} ${url} answered ${response.status} with a body that is not {code, error}: ${text.slice(0, 200)}`);
    }
    return { status: response.status, body: parsed };
  }

  /** An admin call that must succeed, its body checked against the named schema. */
  async admin<T>(method: string, path: string, schema: keyof typeof validators, body?: unknown): Promise<T> {
    const answer = await this.call(method, `${this.options.adminUrl.replace(/\/$/, '')}${path}`, this.options.adminToken, body);
    if (answer.status >= 300) throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
    const validate = validators[schema] as Validator<T>;
    if (!validate(answer.body)) throw new Error(`${method} ${path} answered a body that is not a ${schema}: ${JSON.stringify(answer.body).slice(0, 300)}`);
    return answer.body;
  }

  /** Whether the target runs with a test clock (POST /admin/v1/test/clock answers). */
  async hasClock(): Promise<boolean> {
    if (!this.options.adminToken) return false;
    try {
      const answer = await this.call('POST', `${this.options.adminUrl}/admin/v1/test/clock`, this.options.adminToken, { advance_ms: 0 });
      return answer.status === 200 && validators.ClockNow(answer.body);
    } catch {
      return false;
    }
  }

  async advanceClock(ms: number): Promise<void> {
    await this.admin('POST', '/admin/v1/test/clock', 'ClockNow', { advance_ms: ms });
  }
}
