// HTTP Basic logins (RFC 7617) with the users of the Kafka listener: the password is checked
// against the user's stored SCRAM credential, as SASL/PLAIN does (kafka/sasl/password.ts).
import type { PasswordChecker } from "../kafka/sasl/password.ts";

/** The user and password of an `Authorization: Basic ...` header, or null. */
export function parseBasic(
  header: string | null | undefined,
): { user: string; password: string } | null {
  const m = /^Basic\s+([A-Za-z0-9+/]+=*)\s*$/i.exec(header ?? "");
  if (!m) return null;
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(Buffer.from(m[1], "base64"));
  } catch {
    return null;
  }
  const i = text.indexOf(":");
  if (i <= 0) return null;
  return { user: text.slice(0, i), password: text.slice(i + 1) };
}

/** The user a Basic header proves, or null (no Basic header, or a wrong password). */
export async function basicLogin(
  header: string | null | undefined,
  passwords: PasswordChecker,
): Promise<string | null> {
  const b = parseBasic(header);
  if (b === null || b.password === "") return null;
  return (await passwords.check(b.user, b.password)) ? b.user : null;
}

/** The challenges of a 401: the token, and the users when there are any to log in with. */
export function challenges(basic: boolean): string[] {
  return basic
    ? ['Bearer realm="broker"', 'Basic realm="broker", charset="UTF-8"']
    : ['Bearer realm="broker"'];
}
