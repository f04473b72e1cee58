/** Typed failures of the Kafka wire codec. Decoding hostile bytes only ever throws ProtocolDecodeError. */
import { DecodeError } from "../decode-error.ts";

/** The input bytes are not a valid message of the requested (api, version). Close the connection. */
export class ProtocolDecodeError extends DecodeError {
  override readonly name: string = "ProtocolDecodeError";
}

/** The value handed to the encoder cannot be written in the requested version (a programming error). */
export class ProtocolEncodeError extends Error {
  override readonly name: string = "ProtocolEncodeError";
}

/**
 * The (api key, version) pair has no schema here. It is a decode error (close the connection),
 * except that the listener answers ApiVersions above its range with UNSUPPORTED_VERSION.
 */
export class UnsupportedApiError extends ProtocolDecodeError {
  override readonly name: string = "UnsupportedApiError";
  constructor(
    readonly apiKey: number,
    readonly apiVersion: number,
    /** The parsed request header, when decoding a whole frame. */
    readonly header?: { correlationId: number; clientId: string | null },
  ) {
    super(`unsupported api ${apiKey} v${apiVersion}`);
  }
}
