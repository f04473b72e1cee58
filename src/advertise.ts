// The host a broker tells clients and other brokers when no --advertise-host is given. Sans-IO:
// the caller passes the machine's interfaces (os.networkInterfaces()).
//
// A listener bound to one address advertises that address. A wildcard listener (0.0.0.0, ::)
// advertises the machine's first non-loopback address rather than its hostname: a hostname
// often does not resolve on laptops and inside containers, an address does.

export interface InterfaceAddress {
  address: string;
  family: string | number;
  internal: boolean;
}

export type Interfaces = Record<string, InterfaceAddress[] | undefined>;

export function isWildcard(host: string): boolean {
  return host === "0.0.0.0" || host === "::" || host === "[::]";
}

const LINK_LOCAL = /^(169\.254\.|fe80:)/i;

/** Why the default was chosen, for the start-up log. */
export type AdvertisedFrom = "flag" | "listener" | "interface" | "loopback";

/**
 * The first usable non-loopback address: IPv4 before IPv6 (a v6 address is useless to a client
 * without v6 routes), link-local addresses (169.254/16, fe80::/10) skipped.
 */
export function firstNonLoopback(ifaces: Interfaces): string | undefined {
  const all = Object.values(ifaces).flatMap((a) => a ?? []).filter((a) =>
    !a.internal && !LINK_LOCAL.test(a.address) && a.address !== "127.0.0.1" && a.address !== "::1"
  );
  const v4 = all.find((a) => a.family === "IPv4" || a.family === 4);
  return (v4 ?? all[0])?.address;
}

/** The host to advertise for a listener bound to `listenHost`. */
export function advertisedHost(
  flag: string | undefined,
  listenHost: string,
  ifaces: Interfaces,
): { host: string; from: AdvertisedFrom } {
  if (flag !== undefined) return { host: flag, from: "flag" };
  if (!isWildcard(listenHost)) return { host: listenHost, from: "listener" };
  const found = firstNonLoopback(ifaces);
  // Only loopback: only clients on this machine can connect anyway.
  return found === undefined
    ? { host: "127.0.0.1", from: "loopback" }
    : { host: found, from: "interface" };
}
