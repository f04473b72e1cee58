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
import { ErrorCode } from "../protocol/kafka/error-codes.ts";

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
export const unsupportedMedia = (message: string) => new HttpError(415, 41500, message);

/** Kafka error code -> HTTP status. */
export function statusForKafkaCode(code: number): ContentfulStatusCode {
  switch (code) {
    case ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
    case ErrorCode.GROUP_ID_NOT_FOUND:
    case ErrorCode.UNKNOWN_MEMBER_ID:
    case ErrorCode.UNKNOWN_TOPIC_ID:
      return 404;
    case ErrorCode.TOPIC_ALREADY_EXISTS:
    case ErrorCode.ILLEGAL_GENERATION:
    case ErrorCode.REBALANCE_IN_PROGRESS:
    case ErrorCode.NON_EMPTY_GROUP:
    case ErrorCode.FENCED_INSTANCE_ID:
    case ErrorCode.INCONSISTENT_GROUP_PROTOCOL:
    case ErrorCode.GROUP_MAX_SIZE_REACHED:
      return 409;
    case ErrorCode.MESSAGE_TOO_LARGE:
    case ErrorCode.RECORD_LIST_TOO_LARGE:
    case ErrorCode.OFFSET_METADATA_TOO_LARGE:
      return 413;
    case ErrorCode.OFFSET_OUT_OF_RANGE:
      return 416;
    case ErrorCode.INVALID_GROUP_ID:
    case ErrorCode.INVALID_SESSION_TIMEOUT:
    case ErrorCode.INVALID_COMMIT_OFFSET_SIZE:
      return 400;
    case ErrorCode.CORRUPT_MESSAGE:
    case ErrorCode.INVALID_TOPIC_EXCEPTION:
    case ErrorCode.INVALID_TIMESTAMP:
    case ErrorCode.INVALID_PARTITIONS:
    case ErrorCode.INVALID_REPLICATION_FACTOR:
    case ErrorCode.INVALID_REPLICA_ASSIGNMENT:
    case ErrorCode.INVALID_CONFIG:
    case ErrorCode.INVALID_REQUEST:
    case ErrorCode.POLICY_VIOLATION:
    case ErrorCode.INVALID_RECORD:
      return 422;
    case ErrorCode.KAFKA_STORAGE_ERROR:
      return 507;
    case ErrorCode.NOT_CONTROLLER: // a metadata write on a follower: the message names the leader
    case ErrorCode.BROKER_NOT_AVAILABLE:
    case ErrorCode.NOT_LEADER_OR_FOLLOWER:
    case ErrorCode.NOT_ENOUGH_REPLICAS:
    case ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND:
    case ErrorCode.COORDINATOR_NOT_AVAILABLE:
    case ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
    case ErrorCode.NOT_COORDINATOR:
      return 503;
    case ErrorCode.REQUEST_TIMED_OUT:
      return 504;
    default:
      return 500;
  }
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
  // Damaged stored bytes are the server's fault, not a full disk (507).
  if (e instanceof CorruptLogError || e instanceof QuarantinedLogError) {
    return new HttpError(500, 50056, e.message, e.errorCode);
  }
  let code: number | undefined;
  if (e instanceof MetaError) code = e.code;
  else if (e instanceof LogError || e instanceof BrokerError || e instanceof ReplicaError) {
    code = e.errorCode;
  }
  if (code === undefined) return undefined;
  return kafkaError(code, (e as Error).message);
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
