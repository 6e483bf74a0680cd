// The page's side of lockd's API: the API key, requests carrying it, and problem+json errors.

// sessionStorage, never localStorage or a cookie: the key lives as long as this tab and is
// never sent anywhere but in the Authorization header of this page's own requests.
const KEY_ITEM = 'lockd.apiKey';

export const apiKey = {
  /** The key in use, or '' (no key: right for a server without API keys). */
  get() {
    return sessionStorage.getItem(KEY_ITEM) ?? '';
  },
  set(key) {
    if (key) sessionStorage.setItem(KEY_ITEM, key);
    else sessionStorage.removeItem(KEY_ITEM);
  },
  forget() {
    sessionStorage.removeItem(KEY_ITEM);
  },
};

/** The headers every request of the page carries. */
export function authHeaders() {
  const key = apiKey.get();
  return key ? { Authorization: `Bearer ${key}` } : {};
}

/** An error answer of the API (RFC 9457 problem details), or a failure to reach it. */
export class ApiProblem extends Error {
  constructor({ status = 0, type = '', title = '', detail = '' }) {
    super(detail ? `${title}: ${detail}` : title);
    this.status = status;
    this.type = type;
    this.title = title;
    this.detail = detail;
  }

  /** The last path segment of the problem type: `admin-required`, `not-found`, ... */
  get slug() {
    return this.type.split('/').pop() ?? '';
  }

  /** What to show people: the title and, when there is one, the detail. */
  get text() {
    return this.detail ? `${this.title}: ${this.detail}` : this.title;
  }
}

/** Reads an error answer into an ApiProblem, whatever its body. */
export async function problemOf(response) {
  const fallback = { status: response.status, title: `${response.status} ${response.statusText}`.trim() };
  const type = response.headers.get('content-type') ?? '';
  if (!type.includes('json')) return new ApiProblem(fallback);
  try {
    const body = await response.json();
    return new ApiProblem({
      status: response.status,
      type: typeof body.type === 'string' ? body.type : '',
      title: typeof body.title === 'string' ? body.title : fallback.title,
      detail: typeof body.detail === 'string' ? body.detail : '',
    });
  } catch {
    return new ApiProblem(fallback);
  }
}

/** A path segment: a name may hold '/', '?', '%' or '#'. */
export const segment = encodeURIComponent;

/** `path` with the query parameters that are set (undefined and '' are left out). */
export function withQuery(path, params) {
  const parts = Object.entries(params)
    .filter(([, value]) => value !== undefined && value !== '')
    .map(([name, value]) => `${name}=${encodeURIComponent(value)}`);
  return parts.length ? `${path}?${parts.join('&')}` : path;
}

/**
 * Sends one request with the key; resolves to the Response when it is a 2xx.
 * @throws {ApiProblem} for an error answer (status > 0) or no answer at all (status 0).
 */
export async function send(path, { method = 'GET', headers = {}, signal } = {}) {
  let response;
  try {
    response = await fetch(path, {
      method,
      headers: { Accept: 'application/json', ...authHeaders(), ...headers },
      signal,
      cache: 'no-store',
    });
  } catch (error) {
    if (error.name === 'AbortError') throw error;
    throw new ApiProblem({ title: 'lockd did not answer', detail: error.message });
  }
  if (!response.ok) throw await problemOf(response);
  return response;
}

/**
 * GETs a JSON body. `readAt` is performance.now() when the answer arrived and `serverNow` the
 * server's clock then (ms since the epoch), for countdowns that must not depend on this
 * machine's clock.
 */
export async function getJson(path, options) {
  const response = await send(path, options);
  const readAt = performance.now();
  const body = await response.json();
  return { body, readAt, serverNow: serverNowOf(response) };
}

// The Date header has whole seconds: the server's clock was somewhere in the second after it,
// so its middle is at most half a second off. Without the header, this machine's clock stands in.
function serverNowOf(response) {
  const date = Date.parse(response.headers.get('date') ?? '');
  return Number.isNaN(date) ? Date.now() : date + 500;
}
