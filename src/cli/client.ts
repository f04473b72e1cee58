// The CLI's HTTP client: one place that knows the servers, the token, the error shape, and what
// to do when a broker goes away. Any broker of a cluster serves every request (it passes records,
// reads and group calls to the partition's leader or the group's coordinator over the cluster
// port), so the client talks to one broker and only moves to another when that one cannot be
// reached; requests that failed because a leader or coordinator is moving (503) are retried.

/** An error the server or the network caused: exit 1 with its message. */
export class CliError extends Error {}

/** A mistake on the command line: exit 2 (as the broker's own flags do). */
export class UsageError extends CliError {}

/** The API's answer for one partition of a bulk request (elect leaders, reassignments). */
export interface PartitionOutcome {
  topic: string;
  partition: number;
  error_code: number;
  error: string | null;
  message: string | null;
}

export interface ClientOptions {
  /** Base URLs, tried in order; the first that answers is kept. */
  servers: string[];
  token?: string;
  /** How long retriable failures are retried before giving up (ms). */
  retryMs?: number;
  /** Per request, unless a call asks for none (streams). */
  timeoutMs?: number;
}

/** Default port of the HTTP API when --server names only a host. */
const DEFAULT_PORT = 8080;

/**
 * One --server value as a base URL: an http(s) URL, or host:port / [v6]:port / host (port 8080),
 * as Kafka tools take bootstrap servers. Throws UsageError for anything else.
 */
export function serverUrl(raw: string): string {
  const s = raw.trim();
  if (/^https?:\/\//i.test(s)) {
    try {
      const u = new URL(s);
      return u.origin + u.pathname.replace(/\/+$/, "");
    } catch {
      throw new UsageError(`--server: ${JSON.stringify(raw)} is not a valid URL`);
    }
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(s)) {
    throw new UsageError(`--server: use http:// or https://, not ${s.split("://")[0]}://`);
  }
  const m = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9_.-]+)(?::(\d{1,5}))?$/.exec(s);
  const port = m?.[2] === undefined ? DEFAULT_PORT : Number(m[2]);
  if (!m || port < 1 || port > 65535) {
    throw new UsageError(
      `--server: expected HOST:PORT or an http(s) URL, not ${JSON.stringify(raw)}`,
    );
  }
  return `http://${m[1]}:${port}`;
}

/** A comma-separated --server / BROKER_SERVER value as base URLs (duplicates dropped). */
export function serverList(raw: string): string[] {
  const parts = raw.split(",").map((s) => s.trim()).filter((s) => s !== "");
  if (parts.length === 0) throw new UsageError("--server: no address given");
  return [...new Set(parts.map(serverUrl))];
}

/** Bun's fetch errors in the CLI's words: what failed and what to check. */
export function explainNetworkError(e: unknown, server: string): string {
  const err = e as { name?: string; code?: string; message?: string };
  const code = err.code ?? "";
  const host = server.replace(/^https?:\/\//, "");
  if (err.name === "TimeoutError") return `${host} did not answer in time`;
  if (code === "ECONNREFUSED" || code === "ConnectionRefused") {
    return `nothing is listening on ${host} (connection refused): is the broker running, ` +
      "and is this its --http-addr?";
  }
  if (code === "ENOTFOUND" || code === "EAI_NONAME" || code === "DNSException") {
    return `cannot resolve the host name in ${host}`;
  }
  if (code === "EPROTO" || /TLS|certificate|SSL/i.test(err.message ?? "")) {
    return `TLS with ${host} failed: is it an https listener (use http:// otherwise)?`;
  }
  if (
    code === "ECONNRESET" || code === "ConnectionClosed" || code === "UND_ERR_SOCKET" ||
    code === "EPIPE"
  ) {
    return `${host} closed the connection`;
  }
  if (code === "EHOSTUNREACH" || code === "ENETUNREACH" || code === "ETIMEDOUT") {
    return `${host} cannot be reached (${code})`;
  }
  const first = (err.message ?? String(e)).split(/[.\n]/)[0];
  return `cannot reach ${host}: ${first}${code && !first.includes(code) ? ` (${code})` : ""}`;
}

/** Connection failures: the request may not have reached the broker, another one may answer. */
class Unreachable extends Error {}

/** Statuses that mean "a leader or coordinator is moving, or the broker is busy: try again". */
const RETRIABLE = new Set([503, 504]);

export class ApiClient {
  readonly servers: string[];
  #current = 0;
  /** Other brokers' HTTP addresses, learned from GET /cluster. */
  #learned = false;

  constructor(readonly opts: ClientOptions) {
    if (opts.servers.length === 0) throw new UsageError("no server given");
    this.servers = [...opts.servers];
  }

  /** The base URL requests go to now. */
  get server(): string {
    return this.servers[this.#current];
  }

  /** Move on to the next server (the current one stopped answering mid-stream). */
  next(): void {
    this.#current = (this.#current + 1) % this.servers.length;
  }

  url(path: string): string {
    return this.server + path;
  }

  headers(extra: Record<string, string> = {}): Record<string, string> {
    return this.opts.token ? { authorization: `Bearer ${this.opts.token}`, ...extra } : extra;
  }

  /**
   * Learn the other brokers' HTTP addresses (GET /cluster), so a long-running command can move
   * on when the broker it talks to stops. Best effort: a single broker lists only itself.
   */
  async discover(): Promise<void> {
    if (this.#learned) return;
    this.#learned = true;
    try {
      const c = await this.call<{ brokers?: { host: string; http_port: number }[] }>(
        "GET",
        "/cluster",
      );
      for (const b of c.brokers ?? []) {
        if (typeof b.host !== "string" || !Number.isInteger(b.http_port)) continue;
        const host = b.host.includes(":") ? `[${b.host}]` : b.host;
        const scheme = this.server.startsWith("https:") ? "https" : "http";
        const u = `${scheme}://${host}:${b.http_port}`;
        if (!this.servers.includes(u)) this.servers.push(u);
      }
    } catch {
      // Not fatal: the command goes on with the servers it was given.
    }
  }

  /** One attempt at the current server; Unreachable when the connection failed. */
  async #once(method: string, path: string, init: RequestInit, timeoutMs?: number) {
    const signal = init.signal ??
      (timeoutMs === undefined ? undefined : AbortSignal.timeout(timeoutMs));
    try {
      return await fetch(this.url(path), {
        ...init,
        method,
        signal,
        headers: this.headers((init.headers ?? {}) as Record<string, string>),
      });
    } catch (e) {
      if ((e as Error).name === "AbortError") throw e;
      throw new Unreachable(explainNetworkError(e, this.server));
    }
  }

  /**
   * A request, moving to the next server when this one cannot be reached. With `retry`, 503/504
   * answers (no leader right now, a coordinator moving, a busy broker) and lost connections are
   * retried with backoff for up to retryMs; callers ask for it only where a repeat is harmless
   * or at-least-once is the contract (reads, produce).
   */
  async raw(
    method: string,
    path: string,
    init: RequestInit = {},
    o: { retry?: boolean; timeoutMs?: number | null } = {},
  ): Promise<Response> {
    const timeoutMs = o.timeoutMs === null ? undefined : o.timeoutMs ?? this.opts.timeoutMs;
    const deadline = performance.now() + (o.retry ? this.opts.retryMs ?? 30_000 : 0);
    let backoff = 100;
    const failed: string[] = [];
    for (let attempt = 0;; attempt++) {
      let res: Response | undefined;
      try {
        res = await this.#once(method, path, init, timeoutMs);
      } catch (e) {
        if (!(e instanceof Unreachable)) throw e;
        if (!failed.includes(e.message)) failed.push(e.message);
        // Try each other server once at once, then wait before going round again.
        this.#current = (this.#current + 1) % this.servers.length;
        const roundDone = (attempt + 1) % this.servers.length === 0;
        if (!roundDone) continue;
        if (!o.retry || performance.now() + backoff > deadline) {
          throw new CliError(failed.join("; "));
        }
      }
      if (res !== undefined) {
        if (!o.retry || !RETRIABLE.has(res.status) || performance.now() + backoff > deadline) {
          return res;
        }
        const after = Number(res.headers.get("retry-after"));
        await res.arrayBuffer().catch(() => {});
        if (Number.isFinite(after) && after > 0) backoff = Math.min(after * 1000, 5000);
      }
      await Bun.sleep(backoff);
      backoff = Math.min(backoff * 2, 2000);
    }
  }

  /** A JSON request; a non-2xx answer becomes a CliError with the server's message. */
  async call<T = unknown>(
    method: string,
    path: string,
    body?: unknown,
    o: { retry?: boolean } = {},
  ): Promise<T> {
    const res = await this.raw(
      method,
      path,
      body === undefined ? {} : {
        body: typeof body === "string" ? body : JSON.stringify(body),
        headers: { "content-type": "application/json" },
      },
      { retry: o.retry ?? false },
    );
    return await this.answer<T>(res);
  }

  /** The JSON of a response, or a CliError with the server's message. */
  async answer<T>(res: Response): Promise<T> {
    const text = await res.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    if (!res.ok) {
      const msg = (json as { message?: string } | undefined)?.message ?? (text || res.statusText);
      throw new CliError(`${res.status}: ${msg}${this.hint(res.status)}`);
    }
    return json as T;
  }

  /** What this client can do about an error status (the server's message speaks to curl users). */
  hint(status: number): string {
    if (status !== 401) return "";
    return this.opts.token
      ? " (the token given with --token or BROKER_HTTP_TOKEN is not the broker's)"
      : " (give the broker's token with --token TOKEN or BROKER_HTTP_TOKEN)";
  }
}

export const enc = (s: string) => encodeURIComponent(s);
