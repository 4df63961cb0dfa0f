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

async function call(method, path, body) {
  const headers = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken) headers['x-csrf-token'] = csrfToken;
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      credentials: 'same-origin',
      cache: 'no-store',
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, 'NETWORK', 'The bridge does not answer: is it running?');
  }
  const text = await response.text();
  let data;
  try {
    data = text ? JSON.parse(text) : undefined;
  } catch {
    data = undefined;
  }
  if (response.ok) return data;
  const error = new ApiError(response.status, data?.code ?? 'INTERNAL_ERROR', data?.error ?? `The bridge answered HTTP ${response.status}.`);
  if (response.status === 401 && path.startsWith('/admin/')) onSignedOut(error);
  throw error;
}

export const api = {
  get: (path) => call('GET', path),
  post: (path, body) => call('POST', path, body),
  put: (path, body) => call('PUT', path, body),
  patch: (path, body) => call('PATCH', path, body),
  delete: (path) => call('DELETE', path),
};

/** A path segment or query value from an id the API gave us. */
export const enc = encodeURIComponent;
