// Who a Kafka connection acts as, in Kafka's KafkaPrincipal form ("User:alice"): set once by
// the listener (TLS client certificate) or by SASL, read by whatever authorises requests.
import type { PeerCertificate } from "node:tls";

export interface Principal {
  /** Kafka's principal type; always "User" here. */
  readonly type: "User";
  readonly name: string;
  /** How it was established: "SASL/PLAIN", "SASL/SCRAM-SHA-512", "SSL", or "NONE". */
  readonly via: string;
}

/** A connection that has not authenticated (Kafka's User:ANONYMOUS). */
export const ANONYMOUS: Principal = { type: "User", name: "ANONYMOUS", via: "NONE" };

export function principalString(p: Principal): string {
  return `${p.type}:${p.name}`;
}

/** RFC 2253 escaping of an attribute value. */
function escapeDnValue(v: string): string {
  return v.replace(/([,+"\\<>;=])/g, "\\$1").replace(/^([ #])/, "\\$1").replace(/ $/, "\\ ");
}

/**
 * A certificate subject as Kafka's default SSL principal names it: the X.500 name in RFC 2253
 * order (most specific first), e.g. "CN=alice,O=example". Node lists the attributes in the
 * certificate's order (least specific first), so they are reversed.
 */
export function subjectName(cert: PeerCertificate | undefined | null): string | null {
  const subject = cert?.subject as unknown as Record<string, string | string[]> | undefined;
  if (!subject || typeof subject !== "object") return null;
  const parts: string[] = [];
  for (const [k, v] of Object.entries(subject)) {
    for (const one of Array.isArray(v) ? v : [v]) parts.push(`${k}=${escapeDnValue(String(one))}`);
  }
  return parts.length > 0 ? parts.reverse().join(",") : null;
}
