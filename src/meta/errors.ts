// Typed validation errors of the metadata layer. The code is the Kafka error code the
// front ends send back (the HTTP API maps it to a status), so callers never parse messages.

export const ErrorCode = {
  UNKNOWN_TOPIC_OR_PARTITION: 3,
  INVALID_TOPIC_EXCEPTION: 17,
  TOPIC_ALREADY_EXISTS: 36,
  INVALID_PARTITIONS: 37,
  INVALID_REPLICATION_FACTOR: 38,
  INVALID_REPLICA_ASSIGNMENT: 39,
  INVALID_CONFIG: 40,
  INVALID_REQUEST: 42,
  POLICY_VIOLATION: 44,
  BROKER_NOT_AVAILABLE: 8,
  /** A partition named in a new reassignment is already moving elsewhere. */
  REASSIGNMENT_IN_PROGRESS: 60,
  /** Cancel of a partition that is not moving (finished, or never started). */
  NO_REASSIGNMENT_IN_PROGRESS: 85,
  /** A metadata write reached a broker that is not the Raft leader (the controller). */
  NOT_CONTROLLER: 41,
  /** A partition change computed from a partition epoch that is no longer current. */
  INVALID_UPDATE_VERSION: 108,
  /** A fenced broker named as a partition's leader or in its ISR. */
  INELIGIBLE_REPLICA: 107,
  /** SCRAM credentials (users.ts): a credential to delete that does not exist. */
  RESOURCE_NOT_FOUND: 91,
  /** The same user and mechanism twice in one request. */
  DUPLICATE_RESOURCE: 92,
  /** A credential that cannot be stored (iterations out of range, empty user name). */
  UNACCEPTABLE_CREDENTIAL: 93,
  UNSUPPORTED_SASL_MECHANISM: 33,
  UNKNOWN_SERVER_ERROR: -1,
} as const;

export type ErrorCodeName = keyof typeof ErrorCode;

export class MetaError extends Error {
  override readonly name = "MetaError";
  /** Kafka error code, e.g. 36 for TOPIC_ALREADY_EXISTS. */
  readonly code: number;
  readonly codeName: ErrorCodeName;

  constructor(codeName: ErrorCodeName, message: string) {
    super(message);
    this.codeName = codeName;
    this.code = ErrorCode[codeName];
  }
}

/** Raised when the data dir belongs to another node or cluster: the broker must not start. */
export class IdentityError extends Error {
  override readonly name = "IdentityError";
}
