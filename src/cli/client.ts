// The CLI's HTTP client: one place that knows the server URL, the token and the error shape.
export class CliError extends Error {}

export interface ClientOptions {
  server: string;
  token?: string;
}

export class ApiClient {
  constructor(readonly opts: ClientOptions) {}

  url(path: string): string {
    return this.opts.server.replace(/\/+$/, "") + path;
  }

  headers(extra: Record<string, string> = {}): Record<string, string> {
    return this.opts.token ? { authorization: `Bearer ${this.opts.token}`, ...extra } : extra;
  }

  async raw(method: string, path: string, init: RequestInit = {}): Promise<Response> {
    try {
      return await fetch(this.url(path), {
        ...init,
        method,
        headers: this.headers((init.headers ?? {}) as Record<string, string>),
      });
    } catch (e) {
      throw new CliError(`cannot reach ${this.opts.server}: ${(e as Error).message}`);
    }
  }

  /** A JSON request; a non-2xx answer becomes a CliError with the server's message. */
  async call<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await this.raw(
      method,
      path,
      body === undefined ? {} : {
        body: JSON.stringify(body),
        headers: { "content-type": "application/json" },
      },
    );
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
