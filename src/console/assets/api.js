// API calls from the console: JSON in and out, with the operator's token or user name and
// password (kept only in this page's memory: never in localStorage or a cookie, so they are gone
// when the page is closed).
import { fill, h } from "./dom.js";

/** The Authorization header value: "Bearer …" (the token) or "Basic …" (a user), or "". */
let authorization = "";
/** The user signed in with a password, shown in the header; "" with the token. */
let userName = "";

/**
 * The token goes in its own header; no cookie or browser-kept login is ever sent, and a 401 that
 * offers Basic does not make the browser pop up its own password prompt.
 */
export const OMIT = "omit";
let onUnauthorized = () => {};

export function setToken(t) {
  authorization = t ? `Bearer ${t}` : "";
  userName = "";
}

/** HTTP Basic (RFC 7617): "user:password" as UTF-8, base64. */
export function basicHeader(user, password) {
  const bytes = new TextEncoder().encode(`${user}:${password}`);
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return `Basic ${btoa(bin)}`;
}

export function setUser(user, password) {
  authorization = basicHeader(user, password);
  userName = user;
}

export function hasToken() {
  return authorization !== "";
}

export function signedInUser() {
  return userName;
}

/** Whether a 401 offers Basic: the broker takes its users' names and passwords too. */
export function offersBasic(res) {
  return /(^|[\s,])Basic\s/i.test(res.headers.get("www-authenticate") ?? "");
}

/** What to do when the API answers 401 (the login form). */
export function setUnauthorizedHandler(fn) {
  onUnauthorized = fn;
}

export class ApiError extends Error {
  constructor(status, body, basic = false) {
    super(body?.message ?? `HTTP ${status}`);
    this.status = status;
    this.body = body;
    /** A 401 that offers user logins (HTTP Basic) besides the token. */
    this.basic = basic;
  }
}

/** Headers for an API request: the token or the user when one was given. */
export function authHeaders(extra = {}) {
  return authorization ? { ...extra, authorization } : extra;
}

/** Call the API. A 401 shows the login form and rejects, so the page that asked stops. */
export async function api(path, { method = "GET", body, signal, headers } = {}) {
  const res = await fetch(path, {
    method,
    credentials: OMIT,
    signal,
    headers: authHeaders({
      accept: "application/json",
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...headers,
    }),
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.status === 204) return null;
  const text = await res.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = { message: text.slice(0, 200) };
  }
  if (!res.ok) {
    const err = new ApiError(res.status, data, res.status === 401 && offersBasic(res));
    if (res.status === 401) onUnauthorized(err);
    throw err;
  }
  return data;
}

export const isUnauthorized = (e) => e instanceof ApiError && e.status === 401;
export const isAbort = (e) => e?.name === "AbortError";

/** An error as one line: the API's message and code, or the network failure. */
export function errorText(e) {
  if (e instanceof ApiError) {
    const code = e.body?.error_code ? ` (${e.body.error_code})` : ` (HTTP ${e.status})`;
    return `${e.message}${code}`;
  }
  // fetch() rejects with a TypeError when no answer came at all.
  if (e instanceof TypeError) return `The broker did not answer: ${e.message}`;
  return String(e?.message ?? e);
}

export function showBanner(message, kind = "error") {
  const b = document.getElementById("banner");
  b.className = kind;
  fill(
    b,
    h("span", { "data-testid": "banner-text" }, message),
    h("button", { type: "button", class: "link", onclick: () => (b.hidden = true) }, "×"),
  );
  b.hidden = false;
}

export function clearBanner() {
  document.getElementById("banner").hidden = true;
}

/** Go to a console page ("topics/orders"); the hash change shows it. */
export function navigate(path) {
  location.hash = `#/${path}`;
}

/** Open a streaming API response (a live tail); errors as api() gives them. */
export async function apiStream(path, { signal, accept }) {
  const res = await fetch(path, { signal, credentials: OMIT, headers: authHeaders({ accept }) });
  if (!res.ok) {
    let data = null;
    try {
      data = await res.json();
    } catch {
      data = null;
    }
    const err = new ApiError(res.status, data, res.status === 401 && offersBasic(res));
    if (res.status === 401) onUnauthorized(err);
    throw err;
  }
  return res;
}
