// Real bugs fixed on 2026-12-05, planted back (issue #21: "keep adding one whenever a real bug is
// fixed"): each fix's test has to keep catching its bug. The commit that fixed it is named.
import type { Mutation } from "../types.ts";

const ERRORS = "src/protocol/kafka/error-codes.ts";
const ERROR_TESTS = ["test/protocol/kafka/error-codes.test.ts"];
const REPLICA = "src/replication/replica.ts";
const LEADER = "src/replication/leader.ts";

export const FIXED_BUGS: readonly Mutation[] = [
  {
    id: "http-topic-authorization-500",
    file: ERRORS,
    find: "TOPIC_AUTHORIZATION_FAILED: { code: 29, http: 403 },",
    replace: "TOPIC_AUTHORIZATION_FAILED: { code: 29, http: 500 },",
    tests: ERROR_TESTS,
    why: "An ACL refusal over HTTP answers 500 (a broker fault to monitoring) instead of 403 " +
      "(fixed in 544b329).",
  },
  {
    id: "http-sasl-failure-500",
    file: ERRORS,
    find: "SASL_AUTHENTICATION_FAILED: { code: 58, http: 401 },",
    replace: "SASL_AUTHENTICATION_FAILED: { code: 58, http: 500 },",
    tests: ERROR_TESTS,
    why: "A failed sign-in over HTTP answers 500 instead of 401 (fixed in 544b329).",
  },
  {
    id: "replica-single-copy-hw-not-told",
    file: REPLICA,
    find: "      this.#core.onLocal(this.log.logEndOffset(), this.log.logEndOffset());\n",
    replace: "",
    tests: ["test/replication/replica.test.ts"],
    why: "A one-copy leader acknowledges at its log end but never tells its leader core: when a " +
      "reassignment adds a replica the watermark falls back to where leadership began and the " +
      "move completes onto a log missing acknowledged records (fixed in 0b75ed5).",
    expect: "survives",
    reason: "Defence in depth: the same fix (0b75ed5) also tells the core the log end when a " +
      "single copy gains a replica (Replica.update), which alone keeps the watermark; the bug " +
      "was both missing, which one edit cannot plant. Caught at 7fb8db5 only while 0039766 " +
      "(reverted in 906fe8d) changed when a copy counted as single.",
  },
  {
    id: "controller-unfence-before-elections-applied",
    file: "src/replication/controller-service.ts",
    find: "if (applied < b.epoch || applied < at) return;",
    replace: "if (applied < b.epoch) return;",
    tests: ["test/replication/controller-alters.test.ts"],
    why: "A fenced broker is unfenced once it has applied its own registration, before the " +
      "elections that took its leaderships away: it leads them again as it knew them (a chaos " +
      "run saw OffsetFetch answer 795 commits old; fixed in 6b9a12d).",
  },
  {
    id: "leader-proposes-fenced-follower",
    file: LEADER,
    find: "proposal: mayJoin ? this.#maybeExpand(id, nowMs) : undefined };",
    replace: "proposal: this.#maybeExpand(id, nowMs) };",
    tests: ["test/replication/leader.test.ts"],
    why:
      "A leader proposes a fenced or leaving follower for the ISR: the controller refuses, and " +
      "each proposal holds acks=all writes until then (~300 refusals per rolling restart; fixed " +
      "in e922b1f).",
  },
  {
    id: "leader-refused-join-retried-at-once",
    file: LEADER,
    find: "    if (nowMs < (this.#joinRetryAt.get(id) ?? 0)) return undefined;\n",
    replace: "",
    tests: ["test/replication/leader.test.ts"],
    why: "After the controller refused a follower, the leader proposes it again on the next " +
      "fetch instead of after JOIN_RETRY_MS (fixed in e922b1f).",
  },
];
