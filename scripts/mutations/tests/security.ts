// Planted bugs in the Kafka listener's security: the SASL gate and mechanisms (src/kafka/sasl/),
// the password checks behind PLAIN and HTTP Basic, TLS client certificates, the ACL authorizer
// and what each Kafka API needs from it (src/acl/). Each lets someone in or hides a refusal.
import type { Mutation } from "../types.ts";

const GATE = "src/kafka/sasl/gate.ts";
const AUTHORIZER = "src/acl/authorizer.ts";
const RULES = "src/acl/kafka-rules.ts";
/** Exact frames at a SASL broker: refusals real clients never show (test/kafka/sasl/). */
const GATE_TESTS = ["test/kafka/sasl/gate.test.ts"];
const SASL_TESTS = ["test/kafka/sasl/scram.test.ts", "test/kafka/sasl/gate.test.ts"];
const LISTENER_TESTS = ["test/kafka/sasl/listener.test.ts"];
const AUTHORIZER_TESTS = ["test/acl/authorizer.test.ts"];
const RULES_TESTS = ["test/acl/kafka-rules.test.ts", "test/kafka/acl-partial.test.ts"];

export const SECURITY: readonly Mutation[] = [
  {
    id: "sasl-gate-serves-before-auth",
    file: GATE,
    find:
      "    return this.#refuse(conn, `request ${apiKey} v${version} in SASL state ${s.state}`);",
    replace: "    return this.inner.dispatch(frame, conn);",
    tests: GATE_TESTS,
    why: "A request other than ApiVersions/SaslHandshake/SaslAuthenticate before authentication " +
      "is served instead of closing the connection: SASL required, and nobody needs to log in.",
  },
  {
    id: "sasl-gate-mechanism-not-enabled",
    file: GATE,
    find: "isSaslMechanism(mechanism) && enabled.includes(mechanism)",
    replace: "isSaslMechanism(mechanism)",
    tests: GATE_TESTS,
    why: "SaslHandshake accepts a mechanism the operator did not enable (PLAIN, passwords in " +
      "clear, on a listener configured for SCRAM only).",
  },
  {
    id: "sasl-gate-failed-login-keeps-connection",
    file: GATE,
    find: "new Uint8Array(0)),\n        close: true,\n",
    replace: "new Uint8Array(0)),\n        close: false,\n",
    tests: GATE_TESTS,
    why: "A failed SaslAuthenticate leaves the connection open: one connection may guess " +
      "passwords for ever (Kafka closes it).",
  },
  {
    id: "sasl-plain-authzid-other-user",
    file: "src/kafka/sasl/exchange.ts",
    find: '  if (authzid !== "" && authzid !== user) {',
    replace: '  if (authzid !== "" && authzid === "-") {',
    tests: SASL_TESTS,
    why: "SASL/PLAIN accepts an authorization id naming another user (Kafka refuses it): a " +
      "client believes it acts as that user while the broker authorises the login name.",
  },
  {
    id: "sasl-password-cache-ignores-credential",
    file: "src/kafka/sasl/password.ts",
    find: "      .update(cred.mechanism).update(cred.storedKey).update(cred.salt)\n",
    replace: "      .update(cred.mechanism)\n",
    tests: SASL_TESTS,
    why: "The password cache's key leaves out the credential: after a password change the old " +
      "password still logs in (PLAIN, HTTP Basic) for the cache's lifetime.",
  },
  {
    id: "tls-client-cert-not-requested",
    file: "src/kafka/server.ts",
    find: "...(tls.ca ? { ca: tls.ca, requestCert: true, rejectUnauthorized: true } : {}),",
    replace: "...(tls.ca ? { ca: tls.ca, rejectUnauthorized: true } : {}),",
    tests: LISTENER_TESTS,
    why: "With --kafka-tls-ca the server never asks for a client certificate: no client can " +
      "present one, so every client is refused (or, with the check after the handshake gone, " +
      "every client is let in).",
  },
  {
    id: "acl-deny-all-ignored",
    file: AUTHORIZER,
    find: "    const deny = matching.find((b) =>\n      b.permission === AclPermission.DENY &&\n" +
      "      (b.operation === op || b.operation === AclOperation.ALL)\n",
    replace:
      "    const deny = matching.find((b) =>\n      b.permission === AclPermission.DENY &&\n" +
      "      (b.operation === op)\n",
    tests: AUTHORIZER_TESTS,
    why: "A DENY for operation ALL denies nothing: an operator's blanket ban on a principal is " +
      "overridden by any ALLOW.",
  },
  {
    id: "acl-literal-matches-as-prefix",
    file: AUTHORIZER,
    find: "return b.resourceName === WILDCARD || b.resourceName === name;",
    replace: "return b.resourceName === WILDCARD || name.startsWith(b.resourceName);",
    tests: AUTHORIZER_TESTS,
    why: "A LITERAL binding matches every name it prefixes: READ on topic `orders` also grants " +
      "`orders-payroll`.",
  },
  {
    id: "acl-host-ignored",
    file: AUTHORIZER,
    find: "(b.host === WILDCARD || b.host === who.host);",
    replace: "b.host.length > 0;",
    tests: AUTHORIZER_TESTS,
    why: "A binding's host is not compared: an ALLOW for one address allows the principal from " +
      "everywhere (and a DENY for one address denies it everywhere).",
  },
  {
    id: "acl-describe-configs-implies-alter",
    file: AUTHORIZER,
    find: "[AclOperation.DESCRIBE_CONFIGS]: [AclOperation.ALTER_CONFIGS],",
    replace: "[AclOperation.ALTER_CONFIGS]: [AclOperation.DESCRIBE_CONFIGS],",
    tests: AUTHORIZER_TESTS,
    why: "The implication runs the wrong way: DESCRIBE_CONFIGS grants ALTER_CONFIGS (a reader " +
      "may change retention), and ALTER_CONFIGS no longer lets an operator read what it sets.",
  },
  {
    id: "acl-fetch-needs-describe",
    file: RULES,
    find:
      "replica(b) ? cluster(Op.CLUSTER_ACTION) : topics(Op.READ, b.topics?.map((t) => t.topic)),",
    replace:
      "replica(b) ? cluster(Op.CLUSTER_ACTION) : topics(Op.DESCRIBE, b.topics?.map((t) => t.topic)),",
    tests: RULES_TESTS,
    why: "Fetch asks for DESCRIBE instead of READ: a producer (WRITE implies DESCRIBE) may " +
      "consume every topic it writes to.",
  },
  {
    id: "acl-replica-fetch-unchecked",
    file: RULES,
    find:
      "replica(b) ? cluster(Op.CLUSTER_ACTION) : topics(Op.READ, b.topics?.map((t) => t.topic)),",
    replace: "replica(b) ? [] : topics(Op.READ, b.topics?.map((t) => t.topic)),",
    tests: RULES_TESTS,
    why: "A Fetch that says it comes from a replica (replicaId >= 0) needs no permission: any " +
      "client claiming a broker id reads every topic.",
  },
  {
    id: "acl-offset-commit-no-topic-read",
    file: RULES,
    find: "    ...topics(Op.READ, names(b.topics)),\n",
    replace: "",
    tests: RULES_TESTS,
    why: "OffsetCommit checks only the group: a member may commit offsets for topics it may not " +
      "read, moving other consumers of the group past records.",
  },
];
