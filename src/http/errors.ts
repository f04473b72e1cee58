// One error shape for the HTTP API: {"error_code", "message"} with a fitting status.
// error_code is the HTTP status followed by two digits (Confluent REST Proxy style, e.g. 40403),
// or for Kafka-level failures status*100 + a stable suffix; kafka_error_code carries Kafka's number.
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { MetaError } from "../meta/index.ts";
import { LogError } from "../storage/index.ts";
import { BrokerError } from "../core/partition-manager.ts";

export class HttpError extends Error {
  constructor(readonly status: ContentfulStatusCode, readonly errorCode: number, message: string) {
    super(message);
  }
}

export const badRequest = (message: string) => new HttpError(400, 40000, message);

/** Kafka error code -> HTTP status. */
function statusForKafkaCode(code: number): ContentfulStatusCode {
  switch (code) {
    case 3: // UNKNOWN_TOPIC_OR_PARTITION
    case 69: // GROUP_ID_NOT_FOUND
      return 404;
    case 36: // TOPIC_ALREADY_EXISTS
      return 409;
    case 1: // OFFSET_OUT_OF_RANGE
    case 10: // MESSAGE_TOO_LARGE
    case 2: // CORRUPT_MESSAGE
    case 17: // INVALID_TOPIC_EXCEPTION
    case 32: // INVALID_TIMESTAMP
    case 37: // INVALID_PARTITIONS
    case 38: // INVALID_REPLICATION_FACTOR
    case 39: // INVALID_REPLICA_ASSIGNMENT
    case 40: // INVALID_CONFIG
    case 42: // INVALID_REQUEST
    case 44: // POLICY_VIOLATION
    case 87: // INVALID_RECORD
      return code === 10 ? 413 : code === 1 ? 416 : 422;
    case 56: // KAFKA_STORAGE_ERROR
      return 507;
    case 6: // NOT_LEADER_OR_FOLLOWER
    case 19: // NOT_ENOUGH_REPLICAS
      return 503;
    default:
      return 500;
  }
}

export function toHttpError(e: unknown): HttpError | undefined {
  if (e instanceof HttpError) return e;
  let code: number | undefined;
  if (e instanceof MetaError) code = e.code;
  else if (e instanceof LogError || e instanceof BrokerError) code = e.errorCode;
  if (code === undefined) return undefined;
  const status = statusForKafkaCode(code);
  const err = new HttpError(status, status * 100 + (code % 100), (e as Error).message);
  (err as HttpError & { kafkaErrorCode: number }).kafkaErrorCode = code;
  return err;
}

export function errorResponse(c: Context, e: HttpError, extra: Record<string, unknown> = {}) {
  const kafka = (e as HttpError & { kafkaErrorCode?: number }).kafkaErrorCode;
  return c.json(
    {
      error_code: e.errorCode,
      message: e.message,
      ...(kafka !== undefined ? { kafka_error_code: kafka } : {}),
      ...extra,
    },
    e.status,
  );
}
