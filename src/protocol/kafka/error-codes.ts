// Kafka's error codes, each defined once: its number (Errors.java), whether the Java client
// retries it (a RetriableException), and the HTTP status the REST front door answers it with
// (src/http/errors.ts builds its error bodies from this; 503 for a passing state a retry gets
// past, such as a leadership moving; 500 where no better status fits, as for a server fault).
// Storage, metadata, core, group and HTTP errors all carry these numbers as `errorCode`.

interface ErrorSpec {
  readonly code: number;
  readonly http: number;
  readonly retriable?: true;
}

const ERRORS = {
  UNKNOWN_SERVER_ERROR: { code: -1, http: 500 },
  NONE: { code: 0, http: 200 },
  OFFSET_OUT_OF_RANGE: { code: 1, http: 416 },
  CORRUPT_MESSAGE: { code: 2, http: 422, retriable: true },
  UNKNOWN_TOPIC_OR_PARTITION: { code: 3, http: 404, retriable: true },
  LEADER_NOT_AVAILABLE: { code: 5, http: 503, retriable: true },
  NOT_LEADER_OR_FOLLOWER: { code: 6, http: 503, retriable: true },
  REQUEST_TIMED_OUT: { code: 7, http: 504, retriable: true },
  BROKER_NOT_AVAILABLE: { code: 8, http: 503 },
  MESSAGE_TOO_LARGE: { code: 10, http: 413 },
  OFFSET_METADATA_TOO_LARGE: { code: 12, http: 413 },
  NETWORK_EXCEPTION: { code: 13, http: 503, retriable: true },
  COORDINATOR_LOAD_IN_PROGRESS: { code: 14, http: 503, retriable: true },
  COORDINATOR_NOT_AVAILABLE: { code: 15, http: 503, retriable: true },
  NOT_COORDINATOR: { code: 16, http: 503, retriable: true },
  INVALID_TOPIC_EXCEPTION: { code: 17, http: 422 },
  RECORD_LIST_TOO_LARGE: { code: 18, http: 413 },
  NOT_ENOUGH_REPLICAS: { code: 19, http: 503, retriable: true },
  NOT_ENOUGH_REPLICAS_AFTER_APPEND: { code: 20, http: 503, retriable: true },
  INVALID_REQUIRED_ACKS: { code: 21, http: 500 },
  ILLEGAL_GENERATION: { code: 22, http: 409 },
  INCONSISTENT_GROUP_PROTOCOL: { code: 23, http: 409 },
  INVALID_GROUP_ID: { code: 24, http: 400 },
  UNKNOWN_MEMBER_ID: { code: 25, http: 404 },
  INVALID_SESSION_TIMEOUT: { code: 26, http: 400 },
  REBALANCE_IN_PROGRESS: { code: 27, http: 409 },
  INVALID_COMMIT_OFFSET_SIZE: { code: 28, http: 400 },
  TOPIC_AUTHORIZATION_FAILED: { code: 29, http: 403 },
  GROUP_AUTHORIZATION_FAILED: { code: 30, http: 403 },
  CLUSTER_AUTHORIZATION_FAILED: { code: 31, http: 403 },
  INVALID_TIMESTAMP: { code: 32, http: 422 },
  UNSUPPORTED_SASL_MECHANISM: { code: 33, http: 500 },
  ILLEGAL_SASL_STATE: { code: 34, http: 500 },
  UNSUPPORTED_VERSION: { code: 35, http: 500 },
  TOPIC_ALREADY_EXISTS: { code: 36, http: 409 },
  INVALID_PARTITIONS: { code: 37, http: 422 },
  INVALID_REPLICATION_FACTOR: { code: 38, http: 422 },
  INVALID_REPLICA_ASSIGNMENT: { code: 39, http: 422 },
  INVALID_CONFIG: { code: 40, http: 422 },
  NOT_CONTROLLER: { code: 41, http: 503, retriable: true },
  INVALID_REQUEST: { code: 42, http: 422 },
  UNSUPPORTED_FOR_MESSAGE_FORMAT: { code: 43, http: 500 },
  POLICY_VIOLATION: { code: 44, http: 422 },
  OUT_OF_ORDER_SEQUENCE_NUMBER: { code: 45, http: 500 },
  DUPLICATE_SEQUENCE_NUMBER: { code: 46, http: 500 },
  INVALID_PRODUCER_EPOCH: { code: 47, http: 500 },
  INVALID_TXN_STATE: { code: 48, http: 500 },
  INVALID_PRODUCER_ID_MAPPING: { code: 49, http: 500 },
  CONCURRENT_TRANSACTIONS: { code: 51, http: 500, retriable: true },
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED: { code: 53, http: 403 },
  KAFKA_STORAGE_ERROR: { code: 56, http: 507, retriable: true },
  SASL_AUTHENTICATION_FAILED: { code: 58, http: 401 },
  UNKNOWN_PRODUCER_ID: { code: 59, http: 500 },
  REASSIGNMENT_IN_PROGRESS: { code: 60, http: 500 },
  NON_EMPTY_GROUP: { code: 68, http: 409 },
  GROUP_ID_NOT_FOUND: { code: 69, http: 404 },
  FETCH_SESSION_ID_NOT_FOUND: { code: 70, http: 500, retriable: true },
  INVALID_FETCH_SESSION_EPOCH: { code: 71, http: 500, retriable: true },
  TOPIC_DELETION_DISABLED: { code: 73, http: 500 },
  FENCED_LEADER_EPOCH: { code: 74, http: 503, retriable: true },
  UNKNOWN_LEADER_EPOCH: { code: 75, http: 503, retriable: true },
  UNSUPPORTED_COMPRESSION_TYPE: { code: 76, http: 500 },
  OFFSET_NOT_AVAILABLE: { code: 78, http: 503, retriable: true },
  MEMBER_ID_REQUIRED: { code: 79, http: 500 },
  PREFERRED_LEADER_NOT_AVAILABLE: { code: 80, http: 500 },
  GROUP_MAX_SIZE_REACHED: { code: 81, http: 409 },
  FENCED_INSTANCE_ID: { code: 82, http: 409 },
  ELIGIBLE_LEADERS_NOT_AVAILABLE: { code: 83, http: 500 },
  ELECTION_NOT_NEEDED: { code: 84, http: 500 },
  NO_REASSIGNMENT_IN_PROGRESS: { code: 85, http: 500 },
  INVALID_RECORD: { code: 87, http: 422 },
  UNSTABLE_OFFSET_COMMIT: { code: 88, http: 500, retriable: true },
  THROTTLING_QUOTA_EXCEEDED: { code: 89, http: 429, retriable: true },
  PRODUCER_FENCED: { code: 90, http: 500 },
  RESOURCE_NOT_FOUND: { code: 91, http: 404 },
  DUPLICATE_RESOURCE: { code: 92, http: 500 },
  UNACCEPTABLE_CREDENTIAL: { code: 93, http: 422 },
  UNKNOWN_TOPIC_ID: { code: 100, http: 404, retriable: true },
  INELIGIBLE_REPLICA: { code: 107, http: 500 },
  INVALID_UPDATE_VERSION: { code: 108, http: 500 },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCodeName = keyof typeof ERRORS;
export const ErrorCode = Object.fromEntries(
  Object.entries(ERRORS).map(([name, e]) => [name, e.code]),
) as { readonly [K in ErrorCodeName]: (typeof ERRORS)[K]["code"] };
export type ErrorCodeValue = (typeof ErrorCode)[ErrorCodeName];

const BY_CODE = new Map<number, ErrorSpec & { name: ErrorCodeName }>(
  (Object.entries(ERRORS) as [ErrorCodeName, ErrorSpec][]).map(([name, e]) => [
    e.code,
    { ...e, name },
  ]),
);

/** Whether the Java client retries this code. */
export function isRetriable(code: number): boolean {
  return BY_CODE.get(code)?.retriable === true;
}

export function errorName(code: number): string {
  return BY_CODE.get(code)?.name ?? `UNKNOWN_ERROR_${code}`;
}

/** The HTTP status of a Kafka error code; 500 for a code not in the table. */
export function httpStatusOf(code: number): number {
  return BY_CODE.get(code)?.http ?? 500;
}

/**
 * The Kafka error code of a thrown error: typed errors (storage, metadata, core, replication)
 * all carry one as `errorCode`; anything else is -1 (UNKNOWN_SERVER_ERROR).
 */
export function errorCodeOf(e: unknown): number {
  const code = e && typeof e === "object" ? (e as { errorCode?: unknown }).errorCode : undefined;
  return typeof code === "number" ? code : -1;
}
