// Planted bugs in the Kafka listener: the frame reader, dispatch and the request handlers.
import type { Mutation } from "../types.ts";

const FETCH = "src/kafka/handlers/fetch.ts";

export const KAFKA: readonly Mutation[] = [
  {
    id: "kafka-fetch-ignores-partition-max-bytes",
    file: FETCH,
    find: "const max = Math.min(w.maxBytes, budget);",
    replace: "const max = budget;",
    tests: ["test/kafka/fetch-rules.test.ts"],
    why: "Fetch reads up to the whole response budget for each partition, ignoring its " +
      "partition_max_bytes: one partition fills the response and starves the others.",
  },
  {
    id: "kafka-fetch-longpoll-needs-two-records",
    file: FETCH,
    find: "const from = Math.max(w.offset, end);",
    replace: "const from = Math.max(w.offset, end) + 1;",
    tests: ["test/kafka/fetch-rules.test.ts"],
    why: "A waiting Fetch is woken only by data past the next offset: one new record leaves " +
      "the consumer waiting for max_wait_ms.",
  },
  {
    id: "kafka-fetch-below-log-start-served",
    file: FETCH,
    find: "if (w.offset < start || w.offset > end) {",
    replace: "if (w.offset > end) {",
    tests: ["test/kafka/fetch-rules.test.ts"],
    why: "A Fetch below the log start offset (after DeleteRecords) serves the deleted records " +
      "instead of OFFSET_OUT_OF_RANGE.",
    expect: "survives",
    reason: "Defence in depth: the partition log's read refuses an offset below the log start " +
      "with OffsetOutOfRangeError, which Fetch answers as OFFSET_OUT_OF_RANGE all the same " +
      "(fetch-rules.test.ts checks the answer).",
  },
  {
    id: "kafka-leader-epoch-fenced-unknown-swapped",
    file: "src/kafka/handlers/shared/leader-epoch.ts",
    find:
      "return current < leader ? ErrorCode.FENCED_LEADER_EPOCH : ErrorCode.UNKNOWN_LEADER_EPOCH;",
    replace:
      "return current < leader ? ErrorCode.UNKNOWN_LEADER_EPOCH : ErrorCode.FENCED_LEADER_EPOCH;",
    tests: ["test/kafka/fetch-rules.test.ts"],
    why: "current_leader_epoch checks swapped: a stale epoch answers UNKNOWN_LEADER_EPOCH (the " +
      "client waits) and a newer one FENCED_LEADER_EPOCH (the client drops its metadata).",
  },
  {
    id: "kafka-version-above-max-accepted",
    file: "src/kafka/dispatch.ts",
    find: "if (!range || header.apiVersion < range[0] || header.apiVersion > range[1]) {",
    replace: "if (!range || header.apiVersion < range[0] || header.apiVersion > range[1] + 1) {",
    tests: ["test/kafka/fetch-rules.test.ts"],
    why: "A request one version above the advertised maximum is served instead of refused.",
  },
  {
    id: "kafka-frame-twice-max-accepted",
    file: "src/kafka/connection.ts",
    find:
      "const max = Math.min(this.limits.maxRequestBytes, this.requestBudget?.limit ?? Infinity);",
    replace:
      "const max = Math.min(this.limits.maxRequestBytes * 2, this.requestBudget?.limit ?? Infinity);",
    tests: ["test/kafka/fetch-rules.test.ts"],
    why: "A frame up to twice socket.request.max.bytes is buffered and served.",
  },
  {
    id: "kafka-produce-two-batches-accepted",
    file: "src/kafka/handlers/produce.ts",
    find: "  if (size < records.length) {\n",
    replace: "  if (size < 0) {\n",
    tests: ["test/kafka/fetch-rules.test.ts"],
    why: "Produce accepts a partition's records holding more than one batch (Kafka refuses " +
      "it with INVALID_RECORD from v3 on); only the first batch's header is checked.",
  },
  {
    id: "kafka-produce-internal-topic",
    file: "src/kafka/handlers/produce.ts",
    find:
      "      if (internal) {\n        parts.push(\n          fail(ErrorCode.INVALID_TOPIC_EXCEPTION,",
    replace:
      "      if (internal && false) {\n        parts.push(\n          fail(ErrorCode.INVALID_TOPIC_EXCEPTION,",
    tests: ["test/kafka/fetch-rules.test.ts"],
    why: "A client may produce to __consumer_offsets, corrupting the groups' stored state.",
  },
  {
    id: "kafka-list-offsets-earliest-zero",
    file: "src/kafka/handlers/list-offsets.ts",
    find: "return { ...out, offset: st.log.logStartOffset(), leaderEpoch: st.leaderEpoch };",
    replace: "return { ...out, offset: 0, leaderEpoch: st.leaderEpoch };",
    tests: ["test/kafka/fetch-rules.test.ts"],
    why: "ListOffsets EARLIEST answers 0 instead of the log start offset after DeleteRecords: " +
      "auto.offset.reset=earliest lands on OFFSET_OUT_OF_RANGE.",
  },
  {
    id: "kafka-delete-records-past-hw",
    file: "src/kafka/handlers/delete-records.ts",
    find: "if (offset < 0 || offset > hw) {",
    replace: "if (offset < 0 || offset > hw + 1) {",
    tests: ["test/kafka/fetch-rules.test.ts"],
    why: "DeleteRecords accepts an offset one past the high watermark.",
    expect: "survives",
    reason: "On one broker the high watermark is the log end, and the partition log's " +
      "deleteRecords refuses an offset past its end. Visible only on a replicated partition " +
      "whose high watermark lags its log end: a case for the replication tests.",
  },
  {
    id: "kafka-fetch-response-past-max-bytes",
    file: FETCH,
    find: "if (hasData && r.records.length > budget) return filled;",
    replace: "if (!hasData && r.records.length > budget) return filled;",
    tests: ["test/kafka/fetch-rules.test.ts"],
    why: "KIP-74's rule inverted: a later partition's batch past max_bytes goes out (the " +
      "response exceeds max_bytes) while an oversized first batch is held back (the consumer " +
      "stalls on it).",
  },
];
