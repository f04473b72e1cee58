// Test-suite bugs in the wire codec (src/protocol: the Kafka message codec, record batches,
// compression) and in `broker consume`'s byte path (src/cli/print-batches.ts), which had none or
// few: what a client or an operator would see go wrong.
import type { Mutation } from "../types.ts";

const BATCH = "src/protocol/record-batch.ts";
const CODEC = "src/protocol/kafka/codec.ts";
const PRINT = "src/cli/print-batches.ts";

export const PROTOCOL_CLI: readonly Mutation[] = [
  {
    id: "protocol-varint-sign-dropped",
    file: BATCH,
    find: "return (raw >>> 1) ^ -(raw & 1);",
    replace: "return raw >>> 1;",
    tests: ["test/protocol/record-batch.test.ts"],
    why: "The zigzag step left out of the record varint: a null key or value (length -1) " +
      "decodes as a huge length and every negative delta as a positive one.",
  },
  {
    id: "protocol-batch-crc-from-magic",
    file: BATCH,
    find: "return crc32c(buf.subarray(pos + OFF_ATTRIBUTES, pos + size));",
    replace: "return crc32c(buf.subarray(pos + OFF_MAGIC, pos + size));",
    tests: ["test/protocol/record-batch.test.ts"],
    why: "The batch CRC-32C taken from the magic byte instead of the attributes: consistent with " +
      "itself, so our own batches verify, but every client's batch fails its CRC and the " +
      "clients reject ours.",
  },
  {
    id: "protocol-tagged-duplicate-accepted",
    file: CODEC,
    find: "    if (seen.has(tag)) r.fail(`duplicate tag ${tag}`);\n",
    replace: "",
    tests: ["test/protocol/kafka/hostile.test.ts"],
    why: "A tagged field sent twice is accepted (the last one wins) instead of the request " +
      "being refused as malformed.",
  },
  {
    id: "protocol-null-in-non-nullable",
    file: CODEC,
    find: "    if (!pf.nullable) r.fail(`null ${what} in non-nullable field ${pf.field.name}`);\n",
    replace: "",
    tests: ["test/protocol/kafka/hostile.test.ts"],
    why: "A null string or array where the schema allows none is decoded as null: the handler " +
      "meets a null it never checks for instead of the request being refused.",
  },
  {
    id: "protocol-int64-unsafe-rounded",
    file: "src/protocol/kafka/reader.ts",
    find: "if (hi > 0x1fffff || hi < -0x200000)",
    replace: "if (hi > 0x3fffff || hi < -0x400000)",
    tests: ["test/protocol/kafka/hostile.test.ts"],
    why: "An int64 past 2^53 (an offset or timestamp) is rounded to the nearest double instead " +
      "of refused: the broker acts on a value the client never sent.",
  },
  {
    id: "protocol-lz4-offset-before-output",
    file: "src/protocol/compression/lz4.ts",
    find: "if (off === 0 || off > op - dictStart)",
    replace: "if (off === 0)",
    tests: ["test/protocol/compression/hostile.test.ts"],
    why: "An LZ4 match reaching before the start of the output is not refused: a corrupt or " +
      "hostile batch copies bytes from outside what it decompressed.",
  },
  {
    id: "cli-print-from-skips-first",
    file: PRINT,
    find: "      if (offset < from) continue;\n",
    replace: "      if (offset <= from) continue;\n",
    tests: ["test/cli/print-batches.test.ts"],
    why: "`broker consume --from N` with a byte template skips record N itself (printed from " +
      "N+1).",
  },
  {
    id: "cli-print-control-batch",
    file: PRINT,
    find: "if ((h.attributes & ATTR_CONTROL) !== 0 || batchNext <= from) {",
    replace: "if (batchNext <= from) {",
    tests: ["test/cli/print-batches.test.ts"],
    why: "`broker consume` prints a transaction marker (a control batch) as if it were a record.",
  },
  {
    id: "cli-print-count-plus-one",
    file: PRINT,
    find: "      if (n >= max) return { records: n, next: Math.max(next, offset) };\n",
    replace: "      if (n > max) return { records: n, next: Math.max(next, offset) };\n",
    tests: ["test/cli/print-batches.test.ts"],
    why: "`broker consume --count N` with a byte template prints N+1 records.",
  },
  {
    id: "cli-port-zero-accepted",
    file: "src/cli/client.ts",
    find: "if (!m || port < 1 || port > 65535) {",
    replace: "if (!m || port < 0 || port > 65535) {",
    tests: ["test/cli/units.test.ts"],
    why: "`--server host:0` is accepted (the CLI then fails to connect with a network error) " +
      "instead of a usage error naming the bad address.",
  },
];
