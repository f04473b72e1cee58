/** Public surface of the Kafka wire codec (pure; no IO). */
export {
  ApiKey,
  type ApiKeyName,
  apiName,
  codecVersions,
  declaredApiKeys,
  type Direction,
  hasVersion,
  isFlexible,
  schemaFor,
} from "./apis.ts";
export type * from "./message-types.gen.ts";
export { type Struct, UNKNOWN_TAGS_KEY, type UnknownTaggedField, ZERO_UUID } from "./codec.ts";
export { ErrorCode, type ErrorCodeName, errorName, isRetriable } from "./error-codes.ts";
export { ProtocolDecodeError, ProtocolEncodeError, UnsupportedApiError } from "./errors.ts";
export {
  type DecodedRequest,
  type DecodedRequestHeader,
  decodeRequest,
  decodeRequestFrame,
  decodeRequestHeader,
  decodeResponse,
  decodeResponseFrame,
  encodeApiVersionsUnsupported,
  encodeRequest,
  encodeRequestFrame,
  encodeResponse,
  encodeResponseFrame,
  peekFrameSize,
  type RequestHeader,
  requestHeaderVersion,
  responseHeaderVersion,
} from "./frames.ts";
export { concatChunks } from "./writer.ts";
