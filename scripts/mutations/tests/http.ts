// Planted bugs in the HTTP API, the two authentications (HTTP bearer token, cluster join token)
// and the CLI.
import type { Mutation } from "../types.ts";

export const HTTP_AUTH_CLI: readonly Mutation[] = [
  {
    id: "http-produce-acks-default-one",
    file: "src/http/produce.ts",
    find:
      'if (v === undefined || v === "all" || v === "-1") return -1;\n  if (v === "1") return 1;',
    replace:
      'if (v === "all" || v === "-1") return -1;\n  if (v === undefined || v === "1") return 1;',
    tests: ["test/http/acks-token.test.ts"],
    why: "An HTTP produce without acks waits for the leader only (acks=1), not for every " +
      "in-sync replica as the README promises.",
  },
  {
    id: "http-bearer-token-prefix",
    file: "src/http/auth.ts",
    find: "got.length === want.length && timingSafeEqual(got, want);",
    replace:
      "got.length > 0 && got.length <= want.length && timingSafeEqual(got, want.subarray(0, got.length));",
    tests: ["test/http/acks-token.test.ts"],
    why: "The bearer-token check accepts any prefix of the token (a one-character guess gets in).",
  },
  {
    id: "http-basic-empty-password",
    file: "src/http/basic-auth.ts",
    find: 'if (b === null || b.password === "") return null;',
    replace: "if (b === null) return null;",
    tests: ["test/http/acks-token.test.ts"],
    why: "A Basic login with an empty password reaches the password check (and a user stored " +
      "with an empty password would log in).",
  },
  {
    id: "cluster-proof-ignores-role",
    file: "src/cluster/auth.ts",
    find: 'return hmac(this.#hs, JSON.stringify([role, ...fields])).toString("base64url");',
    replace: 'return hmac(this.#hs, JSON.stringify([...fields])).toString("base64url");',
    tests: ["test/cluster/adapters.test.ts", "test/cluster/attack.test.ts"],
    why: "The handshake proof does not bind the role: a peer may reflect the server's own proof " +
      "back to it and pass as a client without the token.",
    expect: "survives",
    reason: "Defence in depth today: the client's proof covers six fields (its nonce, the " +
      "server's, cluster id, node id, address, session) and the server's five, and the server " +
      "sends its proof only after the client proved, so no proof can be reflected. The role " +
      "tag keeps that true if the field lists ever line up.",
  },
  {
    id: "cluster-proof-length-unchecked",
    file: "src/cluster/auth.ts",
    find: 'if (typeof proof !== "string" || proof.length > 64) return false;',
    replace: 'if (typeof proof !== "string") return false;',
    tests: ["test/cluster/adapters.test.ts", "test/cluster/attack.test.ts"],
    why: "An over-long handshake proof is not refused up front (defence in depth: the length " +
      "compare below refuses it too).",
    expect: "survives",
    reason: "Defence in depth: checkProof's length compare with the expected proof refuses the " +
      "same inputs, so no caller can see the difference.",
  },
  {
    id: "cluster-replay-same-counter",
    file: "src/cluster/auth.ts",
    find: "if (counter <= s.max - REPLAY_WINDOW || counter <= s.floor || s.seen.has(counter)) {",
    replace: "if (counter <= s.max - REPLAY_WINDOW || counter <= s.floor) {",
    tests: ["test/cluster/adapters.test.ts", "test/cluster/attack.test.ts"],
    why: "A SWIM datagram replayed within the window (same counter) is accepted again.",
  },
  {
    id: "cli-key-separator-last",
    file: "src/cli/produce.ts",
    find: "const i = sep === undefined ? -1 : line.indexOf(sep);",
    replace: "const i = sep === undefined ? -1 : line.lastIndexOf(sep);",
    tests: ["test/cli/units.test.ts"],
    why: "produce -K splits a line at the last separator, not the first (kcat -K splits at the " +
      "first): a value holding the separator loses its head to the key.",
  },
  {
    id: "cli-crlf-kept",
    file: "src/cli/produce.ts",
    find: '    if (line.endsWith("\\r")) line = line.slice(0, -1);\n',
    replace: "",
    tests: ["test/cli/units.test.ts"],
    why: "produce keeps the \\r of CRLF input lines in every value.",
  },
  {
    id: "cli-single-header-dropped",
    file: "src/cli/produce.ts",
    find: "const h = Object.keys(headers).length > 0 ?",
    replace: "const h = Object.keys(headers).length > 1 ?",
    tests: ["test/cli/units.test.ts"],
    why: "produce --header K=V given once is dropped: headers go out only when there are two " +
      "or more.",
  },
  {
    id: "http-not-enough-replicas-500",
    file: "src/protocol/kafka/error-codes.ts",
    find: "NOT_ENOUGH_REPLICAS: { code: 19, http: 503,",
    replace: "NOT_ENOUGH_REPLICAS: { code: 19, http: 500,",
    tests: ["test/http/errors.test.ts", "test/http/acks-token.test.ts"],
    why: "NOT_ENOUGH_REPLICAS answers 500 (a server fault, not retried by clients) instead of " +
      "503 (retry later).",
  },
  {
    id: "http-storage-error-500",
    file: "src/protocol/kafka/error-codes.ts",
    find: "KAFKA_STORAGE_ERROR: { code: 56, http: 507,",
    replace: "KAFKA_STORAGE_ERROR: { code: 56, http: 500,",
    tests: ["test/http/errors.test.ts"],
    why: "A storage error (disk full, damaged data) answers 500 instead of 507.",
  },
  {
    id: "cluster-replay-window-edge",
    file: "src/cluster/auth.ts",
    find: "if (counter <= s.max - REPLAY_WINDOW || counter <= s.floor || s.seen.has(counter)) {",
    replace: "if (counter < s.max - REPLAY_WINDOW || counter <= s.floor || s.seen.has(counter)) {",
    tests: ["test/cluster/adapters.test.ts", "test/cluster/replay-window.test.ts"],
    why: "A SWIM datagram exactly one window below the newest counter is accepted; the seen set " +
      "has already forgotten it, so it can be replayed.",
  },
];
