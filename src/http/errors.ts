// One error shape for the HTTP API: {"error_code", "message"} with a fitting status.
// error_code is the HTTP status followed by two digits (Confluent REST Proxy style, e.g. 40403),
// or for Kafka-level failures status*100 + a stable suffix; kafka_error_code carries Kafka's number.
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { MetaError } from "../meta/index.ts";
import { CorruptLogError, LogError, QuarantinedLogError } from "../storage/index.ts";
import { BrokerError } from "../core/partition-manager.ts";
import { ReplicaError } from "../replication/replica.ts";
import { ErrorCode, httpStatusOf } from "../protocol/kafka/error-codes.ts";

export class HttpError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly errorCode: number,
    message: string,
    readonly kafkaErrorCode?: number,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

export const badRequest = (message: string) => new HttpError(400, 40000, message);
export const notFound = (message: string, code = 40400) => new HttpError(404, code, message);
export const topicNotFound = (topic: string) =>
  new HttpError(
    404,
    40403,
    `Topic '${topic}' does not exist.`,
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  );
/** REST Proxy's "partition not found" (40402). */
export const partitionNotFound = (message: string) =>
  new HttpError(404, 40402, message, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
/** Damaged stored bytes: the server's fault (500), not a full disk (507), though Kafka's code is 56. */
export const damagedData = (message: string) =>
  new HttpError(500, 50056, message, ErrorCode.KAFKA_STORAGE_ERROR);
export const unsupportedMedia = (message: string) => new HttpError(415, 41500, message);

/** Kafka error code -> HTTP status, from the one error table (src/protocol/kafka/error-codes.ts). */
export function statusForKafkaCode(code: number): ContentfulStatusCode {
  return httpStatusOf(code) as ContentfulStatusCode;
}

/** What a client should do about a group error: the hint users of REST proxies asked for. */
const HINTS: Record<number, string> = {
  [ErrorCode.ILLEGAL_GENERATION]:
    "the group has rebalanced since this member joined: join again with your member_id",
  [ErrorCode.REBALANCE_IN_PROGRESS]: "the group is rebalancing: join again with your member_id",
  [ErrorCode.UNKNOWN_MEMBER_ID]:
    "this member is not in the group (left or expired after its session timeout): join again",
  [ErrorCode.NON_EMPTY_GROUP]: "the group has active members: stop them (or let them expire) first",
  [ErrorCode.INVALID_SESSION_TIMEOUT]:
    "session_timeout_ms must be within the broker's group.min.session.timeout.ms and " +
    "group.max.session.timeout.ms (6000 and 1800000 ms)",
  [ErrorCode.GROUP_ID_NOT_FOUND]: "no such group",
};

export function kafkaError(code: number, message: string): HttpError {
  const status = statusForKafkaCode(code);
  const hint = HINTS[code];
  return new HttpError(
    status,
    status * 100 + (code % 100),
    hint ? `${message}: ${hint}` : message,
    code,
  );
}

export function toHttpError(e: unknown): HttpError | undefined {
  if (e instanceof HttpError) return e;
  if (e instanceof HTTPException) {
    // Hono's own refusals (malformed JSON in a validator, body limit) are client errors.
    const status = e.status as ContentfulStatusCode;
    return new HttpError(status, status * 100, e.message || "bad request");
  }
  if (e instanceof CorruptLogError || e instanceof QuarantinedLogError) {
    return damagedData(e.message);
  }
  if (
    e instanceof MetaError || e instanceof LogError || e instanceof BrokerError ||
    e instanceof ReplicaError
  ) {
    return kafkaError(e.errorCode, e.message);
  }
  return undefined;
}

export function errorBody(e: HttpError) {
  return {
    error_code: e.errorCode,
    message: e.message,
    ...(e.kafkaErrorCode !== undefined ? { kafka_error_code: e.kafkaErrorCode } : {}),
    ...e.extra,
  };
}

export function errorResponse(c: Context, e: HttpError) {
  return c.json(errorBody(e), e.status);
}
