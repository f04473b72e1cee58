// Produce: checks the request-level rules Kafka applies before the log (acks, exactly one
// magic-2 batch per partition from v3, zstd only from v7, no writes to internal topics), then
// hands the bytes to the partition log, which validates CRC, sizes, timestamps and producer
// sequences. All appends start synchronously in request order, so pipelined idempotent
// batches reach each log in the order the client sent them.
import {
  ApiKey,
  ErrorCode,
  type ProduceRequest,
  type ProduceResponse,
} from "../../protocol/kafka/index.ts";
import { defineHandler } from "../api.ts";
import {
  BATCH_LOG_OVERHEAD,
  OFF_ATTRIBUTES,
  OFF_BATCH_LENGTH,
  OFF_MAGIC,
} from "../../protocol/record-batch.ts";

import type { Acks } from "../../core/partition-manager.ts";
import {
  CloseConnection,
  errorCodeOf,
  errorMessageOf,
  type KafkaContext,
  type RequestContext,
} from "../context.ts";
import { batchTraffic } from "../traffic.ts";
import {
  LegacyMessageError,
  recordsMagic,
  upconvertMessageSet,
} from "../../protocol/legacy-messages.ts";

const ZSTD = 4;

interface PartitionAnswer {
  index: number;
  errorCode: number;
  baseOffset: number;
  logAppendTimeMs: number;
  logStartOffset: number;
  errorMessage: string | null;
}

/** Request-level checks of one partition's records; an error code and reason, or null. */
export function checkProduceRecords(
  records: Uint8Array | null,
  version: number,
): [number, string] | null {
  if (records === null || records.length < BATCH_LOG_OVERHEAD) {
    return [ErrorCode.INVALID_RECORD, "no record batch"];
  }
  const view = new DataView(records.buffer, records.byteOffset, records.byteLength);
  if (records.length < OFF_ATTRIBUTES + 2) {
    return [ErrorCode.CORRUPT_MESSAGE, "truncated record batch"];
  }
  if (view.getInt8(OFF_MAGIC) !== 2) {
    return [
      ErrorCode.INVALID_RECORD,
      `magic ${view.getInt8(OFF_MAGIC)}: only record batch v2 is accepted`,
    ];
  }
  const size = BATCH_LOG_OVERHEAD + view.getInt32(OFF_BATCH_LENGTH);
  if (size > records.length || size < BATCH_LOG_OVERHEAD) {
    return [ErrorCode.CORRUPT_MESSAGE, "record batch length does not match the records"];
  }
  if (size < records.length) {
    return [ErrorCode.INVALID_RECORD, "Produce v3+ carries exactly one record batch per partition"];
  }
  if (version < 7 && (view.getInt16(OFF_ATTRIBUTES) & 0x7) === ZSTD) {
    return [ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, "zstd needs Produce v7 or later"];
  }
  return null;
}

export async function produce(
  ctx: KafkaContext,
  req: RequestContext<ProduceRequest>,
): Promise<ProduceResponse | null> {
  const v = req.header.apiVersion;
  const acksRaw = req.body.acks;
  const acksValid = acksRaw === 0 || acksRaw === 1 || acksRaw === -1;
  const acks = acksRaw as Acks;
  const transactional = req.body.transactionalId !== null;
  // acks=all waits at most timeout_ms for durability (replication, later); past it the
  // partition answers REQUEST_TIMED_OUT although its records may still land, as in Kafka.
  const deadline = acksRaw === -1 ? new Deadline(req.body.timeoutMs) : null;
  const topics: { name: string; parts: (PartitionAnswer | Promise<PartitionAnswer>)[] }[] = [];
  for (const td of req.body.topicData) {
    const name = td.name;
    const parts: (PartitionAnswer | Promise<PartitionAnswer>)[] = [];
    const internal = ctx.partitions.isInternal(name);
    for (const pd of td.partitionData) {
      const index = pd.index;
      const fail = (errorCode: number, errorMessage: string | null): PartitionAnswer => ({
        index,
        errorCode,
        baseOffset: -1,
        logAppendTimeMs: -1,
        logStartOffset: -1,
        errorMessage,
      });
      if (!acksValid) {
        parts.push(
          fail(ErrorCode.INVALID_REQUIRED_ACKS, `acks must be 0, 1 or -1, not ${acksRaw}`),
        );
        continue;
      }
      if (transactional) {
        parts.push(
          fail(
            ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
            "transactions are not supported yet",
          ),
        );
        continue;
      }
      if (internal) {
        parts.push(
          fail(ErrorCode.INVALID_TOPIC_EXCEPTION, `cannot produce to the internal topic ${name}`),
        );
        continue;
      }
      const where = ctx.partitions.leaderError(name, index);
      if (where !== 0) {
        parts.push(
          fail(
            where,
            where === ErrorCode.NOT_LEADER_OR_FOLLOWER
              ? `broker ${ctx.meta.nodeId} is not the leader of ${name}-${index}`
              : `unknown topic or partition ${name}-${index}`,
          ),
        );
        continue;
      }
      let records = pd.records;
      const magic = records === null ? -1 : recordsMagic(records);
      if (v <= 2 && (magic === 0 || magic === 1)) {
        // Messages of format v0/v1 (clients before Kafka 0.11): one v2 batch, as Kafka 3.x
        // up-converts them. Advertising Produce v0-v2 is also what tells librdkafka before 2.10
        // that gzip, snappy and lz4 are available (it checks for Produce v0).
        try {
          records = upconvertMessageSet(records!, { now: Date.now() });
        } catch (e) {
          if (!(e instanceof LegacyMessageError)) throw e;
          parts.push(fail(e.errorCode, e.message));
          continue;
        }
      }
      const bad = checkProduceRecords(records, v);
      if (bad) {
        parts.push(fail(bad[0], bad[1]));
        continue;
      }
      // Started now, before any await: appends keep the request order. The request frame is
      // ours alone, so the log rewrites offsets in it instead of copying it first.
      const appended = ctx.partitions.append(name, index, records!, acks, true).then(
        (r) => {
          const t = batchTraffic(records!);
          ctx.metrics.produced(name, t.records, t.bytes);
          return {
            index,
            errorCode: 0,
            baseOffset: r.baseOffset,
            logAppendTimeMs: r.logAppendTime,
            logStartOffset: r.logStartOffset,
            errorMessage: null,
          };
        },
        (e) => fail(errorCodeOf(e), errorMessageOf(e)),
      );
      parts.push(
        deadline
          ? deadline.race(appended, () =>
            fail(
              ErrorCode.REQUEST_TIMED_OUT,
              `not acknowledged within timeout_ms (${deadline.ms} ms); the records may be written`,
            ))
          : appended,
      );
    }
    topics.push({ name, parts });
  }
  let answers: PartitionAnswer[][];
  try {
    answers = await Promise.all(topics.map((t) => Promise.all(t.parts)));
  } finally {
    deadline?.cancel();
  }
  const responses = [];
  let failed: PartitionAnswer | undefined;
  for (const [i, t] of topics.entries()) {
    const partitionResponses = answers[i];
    for (const p of partitionResponses) if (p.errorCode !== 0) failed ??= p;
    responses.push({
      name: t.name,
      partitionResponses: partitionResponses.map((p) => ({ ...p, recordErrors: [] })),
    });
  }
  if (acksRaw === 0) {
    // No response exists for acks=0; closing is the only way to tell the client to refresh.
    if (failed) {
      ctx.log.debug("acks=0 produce failed; closing the connection", {
        error_code: failed.errorCode,
        error: failed.errorMessage,
      });
      throw new CloseConnection(failed.errorMessage ?? "produce failed");
    }
    return null;
  }
  return { responses, throttleTimeMs: 0 };
}

/** One timer per request, shared by its partitions. */
class Deadline {
  readonly #expired: Promise<void>;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(readonly ms: number) {
    // Kafka completes a zero (or negative) timeout at once unless already satisfied.
    this.#expired = ms <= 0 ? Promise.resolve() : new Promise((resolve) => {
      this.#timer = setTimeout(resolve, ms);
    });
  }

  race<T>(p: Promise<T>, onExpiry: () => T): Promise<T> {
    return Promise.race([p, this.#expired.then(onExpiry)]);
  }

  cancel(): void {
    clearTimeout(this.#timer);
  }
}

// From v0 as in Kafka 3.x (v0-v2 messages are up-converted, legacy-messages.ts): librdkafka before
// 2.10 sends gzip, snappy and lz4 uncompressed unless Produce v0 is listed.
export default defineHandler({
  apiKey: ApiKey.Produce,
  versions: [0, 11],
  handle: produce,
});
