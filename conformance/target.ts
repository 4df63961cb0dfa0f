// The bridge under test over HTTP: the calls scenarios make (the directory) and our admin API's transport.
export interface TargetOptions {
  timeoutMs: number;
}

/** The HTTP base of a node's `/v1` paths (the directory): its ws URL with an http scheme. */
export const v1Base = (wsUrl: string): string => wsUrl.replace(/^ws/, 'http').replace(/\/$/, '');

export interface HttpAnswer {
  status: number;
  body: any;
}

export class Target {
  constructor(readonly options: TargetOptions) {}

  /** One HTTP call; the body is parsed as JSON when it is JSON, else kept as text. Never judges the answer. */
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
      // left as text
    }
    return { status: response.status, body: parsed };
  }
}
