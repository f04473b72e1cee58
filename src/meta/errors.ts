// Typed validation errors of the metadata layer. The code is the Kafka error code the
// front ends send back (the HTTP API maps it to a status), so callers never parse messages.
import { ErrorCode, type ErrorCodeName } from "../protocol/kafka/error-codes.ts";

export class MetaError extends Error {
  override readonly name = "MetaError";
  /** Kafka error code, e.g. 36 for TOPIC_ALREADY_EXISTS, named as in the one error table. */
  readonly errorCode: number;
  readonly codeName: ErrorCodeName;

  constructor(codeName: ErrorCodeName, message: string) {
    super(message);
    this.codeName = codeName;
    this.errorCode = ErrorCode[codeName];
  }
}

/** Raised when the data dir belongs to another node or cluster: the broker must not start. */
export class IdentityError extends Error {
  override readonly name = "IdentityError";
}
