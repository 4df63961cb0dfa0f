// The admin API from the page: same-origin requests with the HttpOnly session cookie, and the session's CSRF token
// on every write. The token lives in this module's memory only: never in storage, URLs or the DOM.

let csrfToken;
let onSignedOut = () => {};

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export function setSession(session) {
  csrfToken = session?.csrf_token;
}

/** Called when the bridge no longer knows the session (expired, signed out elsewhere, bridge restarted). */
export function whenSignedOut(fn) {
  onSignedOut = fn;
}

function request(method, path, body, signal) {
  const headers = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken) headers['x-csrf-token'] = csrfToken;
  return fetch(path, {
    method,
    headers,
    credentials: 'same-origin',
    cache: 'no-store',
    body: body === undefined ? undefined : JSON.stringify(body),
    signal,
  }).catch((err) => {
    if (err.name === 'AbortError') throw err;
    throw new ApiError(0, 'NETWORK', 'The bridge does not answer: is it running?');
  });
}

async function call(method, path, body) {
  const response = await request(method, path, body);
  return answer(response, path);
}

async function answer(response, path) {
  const text = await response.text();
  let data;
  try {
    data = text ? JSON.parse(text) : undefined;
  } catch {
    data = undefined;
  }
  if (response.ok) return data;
  const error = new ApiError(
    response.status,
    data?.code ?? 'INTERNAL_ERROR',
    data?.error ?? `The bridge answered HTTP ${response.status}.`,
  );
  if (response.status === 401 && path.startsWith('/admin/')) onSignedOut(error);
  throw error;
}

/**
 * POSTs `body` and reads the answer as server-sent events while they arrive, calling `onEvent(type, data)` with
 * each event's JSON data. Resolves when the bridge ends the stream; rejects with an ApiError when the bridge
 * refuses the request (it then answers JSON, not a stream), or with an AbortError when `signal` aborts.
 */
async function stream(path, body, { signal, onEvent }) {
  const response = await request('POST', path, body, signal);
  if (!response.ok || !response.body) return answer(response, path);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffered += value.replace(/\r\n?/g, '\n');
    let end;
    while ((end = buffered.indexOf('\n\n')) >= 0) {
      const block = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      const event = serverSentEvent(block);
      if (event) onEvent(event.type, event.data);
    }
  }
}

/** One event's lines (`event:`, `data:`, comments) -> `{ type, data }`; undefined for a block without data. */
function serverSentEvent(block) {
  let type = 'message';
  const data = [];
  for (const line of block.split('\n')) {
    const colon = line.indexOf(':');
    if (colon === 0) continue;
    const name = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (name === 'event') type = value;
    else if (name === 'data') data.push(value);
  }
  if (!data.length) return undefined;
  try {
    return { type, data: JSON.parse(data.join('\n')) };
  } catch {
    return undefined;
  }
}

export const api = {
  get: (path) => call('GET', path),
  post: (path, body) => call('POST', path, body),
  put: (path, body) => call('PUT', path, body),
  patch: (path, body) => call('PATCH', path, body),
  delete: (path) => call('DELETE', path),
  stream,
};

/** A path segment or query value from an id the API gave us. */
export const enc = encodeURIComponent;
