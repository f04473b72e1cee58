/**
 * Request/response headers and whole-message entry points. Frames here are the bytes after the
 * 4-byte size prefix on input; encoders emit the size prefix too.
 */
import { ErrorCode } from "./error-codes.ts";
import { ApiKey, apiName, type Direction, isFlexible, schemaFor } from "./apis.ts";
import { decodeBody, encodeStruct, type Struct } from "./codec.ts";
import { ProtocolDecodeError, ProtocolEncodeError, UnsupportedApiError } from "./errors.ts";
import { Reader } from "./reader.ts";
import { inRange, type MessageSchema } from "./schema.ts";
import { utf8Bytes, Writer } from "./writer.ts";

export interface RequestHeader {
  apiKey: number;
  apiVersion: number;
  correlationId: number;
  /** Null when the client sent -1 (or header v0, which has no client id). */
  clientId: string | null;
}

export interface DecodedRequestHeader extends RequestHeader {
  headerVersion: 0 | 1 | 2;
  /** Offset in the frame where the body starts. */
  bodyOffset: number;
}

/**
 * Request header version for (apiKey, apiVersion): v2 for flexible versions, v0 only for
 * ControlledShutdown v0, v1 otherwise. An ApiVersions request above our range is read as v2
 * from v3 on (KIP-511), so its header can still be parsed to answer UNSUPPORTED_VERSION.
 */
export function requestHeaderVersion(apiKey: number, apiVersion: number): 0 | 1 | 2 {
  if (apiKey === 7 && apiVersion === 0) return 0;
  const s = schemaFor(apiKey, "request");
  if (s && inRange(s.valid, apiVersion)) return inRange(s.flexible, apiVersion) ? 2 : 1;
  if (apiKey === ApiKey.ApiVersions && apiVersion >= 3) return 2;
  return 1;
}

/** Response header version: v1 for flexible versions, except ApiVersions which is always v0. */
export function responseHeaderVersion(apiKey: number, apiVersion: number): 0 | 1 {
  if (apiKey === ApiKey.ApiVersions) return 0;
  return isFlexible(apiKey, apiVersion) ? 1 : 0;
}

function skipTaggedFields(r: Reader): void {
  const count = r.uvarint();
  if (count * 2 > r.remaining) r.fail(`tagged field count ${count} exceeds remaining bytes`);
  for (let i = 0; i < count; i++) {
    r.uvarint();
    const size = r.uvarint();
    r.slice(size, "tagged field");
  }
}

/** Reads the request header (any API key, known or not). */
export function decodeRequestHeader(frame: Uint8Array): DecodedRequestHeader {
  const r = new Reader(frame);
  const apiKey = r.int16();
  const apiVersion = r.int16();
  const correlationId = r.int32();
  const headerVersion = requestHeaderVersion(apiKey, apiVersion);
  let clientId: string | null = null;
  if (headerVersion >= 1) {
    const n = r.int16();
    if (n < -1) r.fail(`negative client id length ${n}`);
    if (n >= 0) clientId = r.utf8(n);
  }
  if (headerVersion === 2) skipTaggedFields(r);
  return { apiKey, apiVersion, correlationId, clientId, headerVersion, bodyOffset: r.pos };
}

function schemaOrThrow(apiKey: number, version: number, direction: Direction): MessageSchema {
  const s = schemaFor(apiKey, direction);
  if (!s || !inRange(s.valid, version)) throw new UnsupportedApiError(apiKey, version);
  return s;
}

function decodeMessage(
  apiKey: number,
  version: number,
  direction: Direction,
  bytes: Uint8Array,
  offset: number,
): Struct {
  const s = schemaOrThrow(apiKey, version, direction);
  return decodeBody(bytes, offset, s.fields, version, inRange(s.flexible, version));
}

/** Decodes a request body of (apiKey, version) starting at `offset`. */
export const decodeRequest = (apiKey: number, version: number, bytes: Uint8Array, offset = 0) =>
  decodeMessage(apiKey, version, "request", bytes, offset);

/** Decodes a response body of (apiKey, version) starting at `offset`. */
export const decodeResponse = (apiKey: number, version: number, bytes: Uint8Array, offset = 0) =>
  decodeMessage(apiKey, version, "response", bytes, offset);

function encodeBody(
  w: Writer,
  apiKey: number,
  version: number,
  direction: Direction,
  body: Struct,
) {
  const s = schemaFor(apiKey, direction);
  if (!s || !inRange(s.valid, version)) {
    throw new ProtocolEncodeError(`no ${direction} schema for ${apiName(apiKey)} v${version}`);
  }
  encodeStruct(w, s.fields, version, inRange(s.flexible, version), body);
}

/** Encodes a request body (no header, no size prefix). */
export function encodeRequest(apiKey: number, version: number, body: Struct): Uint8Array {
  const w = new Writer();
  encodeBody(w, apiKey, version, "request", body);
  return w.bytes();
}

/** Encodes a response body (no header, no size prefix) as chunks; record slices are not copied. */
export function encodeResponse(apiKey: number, version: number, body: Struct): Uint8Array[] {
  const w = new Writer();
  encodeBody(w, apiKey, version, "response", body);
  return w.chunksOut();
}

/** A request frame split into header and decoded body. */
export interface DecodedRequest {
  header: DecodedRequestHeader;
  body: Struct;
}

/**
 * Decodes a whole request frame (without the size prefix). Throws UnsupportedApiError (a
 * ProtocolDecodeError carrying the header) for an unknown key or version, ProtocolDecodeError
 * for malformed bytes.
 */
export function decodeRequestFrame(frame: Uint8Array): DecodedRequest {
  const header = decodeRequestHeader(frame);
  const s = schemaFor(header.apiKey, "request");
  if (!s || !inRange(s.valid, header.apiVersion)) {
    throw new UnsupportedApiError(header.apiKey, header.apiVersion, header);
  }
  const body = decodeBody(
    frame,
    header.bodyOffset,
    s.fields,
    header.apiVersion,
    inRange(s.flexible, header.apiVersion),
  );
  return { header, body };
}

/** Encodes a whole request (size prefix + header + body): for clients, followers and tests. */
export function encodeRequestFrame(header: RequestHeader, body: Struct): Uint8Array {
  const w = new Writer();
  w.reserve(4);
  const hv = requestHeaderVersion(header.apiKey, header.apiVersion);
  w.int16(header.apiKey);
  w.int16(header.apiVersion);
  w.int32(header.correlationId);
  if (hv >= 1) {
    if (header.clientId === null) w.int16(-1);
    else {
      const b = utf8Bytes(header.clientId);
      if (b.length > 0x7fff) throw new ProtocolEncodeError("client id too long");
      w.int16(b.length);
      w.raw(b);
    }
  }
  if (hv === 2) w.uvarint(0);
  encodeBody(w, header.apiKey, header.apiVersion, "request", body);
  const out = w.bytes();
  new DataView(out.buffer, out.byteOffset).setInt32(0, out.length - 4);
  return out;
}

/**
 * Encodes a whole response (size prefix + header + body) as a list of chunks to write in order.
 * Record slices in the body appear as their own chunks, uncopied.
 */
export function encodeResponseFrame(
  apiKey: number,
  version: number,
  correlationId: number,
  body: Struct,
): Uint8Array[] {
  const w = new Writer();
  const size = w.reserve(4);
  w.int32(correlationId);
  if (responseHeaderVersion(apiKey, version) === 1) w.uvarint(0);
  encodeBody(w, apiKey, version, "response", body);
  const total = w.length - 4;
  new DataView(size.buf.buffer, size.buf.byteOffset).setInt32(size.at, total);
  return w.chunksOut();
}

/** Decodes a response frame (without the size prefix) for a request we sent as (apiKey, version). */
export function decodeResponseFrame(
  apiKey: number,
  version: number,
  frame: Uint8Array,
): { correlationId: number; body: Struct } {
  const r = new Reader(frame);
  const correlationId = r.int32();
  if (responseHeaderVersion(apiKey, version) === 1) skipTaggedFields(r);
  return { correlationId, body: decodeResponse(apiKey, version, frame, r.pos) };
}

/**
 * The ApiVersions answer to a request above our range (§1.5): error 35 with a v0 body listing
 * only ApiVersions itself, response header v0.
 */
export function encodeApiVersionsUnsupported(
  correlationId: number,
  min: number,
  max: number,
): Uint8Array[] {
  return encodeResponseFrame(ApiKey.ApiVersions, 0, correlationId, {
    errorCode: ErrorCode.UNSUPPORTED_VERSION,
    apiKeys: [{ apiKey: ApiKey.ApiVersions, minVersion: min, maxVersion: max }],
  });
}

/**
 * Reads the i32 size prefix at `offset`: the frame length, or -1 when fewer than 4 bytes are
 * buffered. Throws ProtocolDecodeError for a negative or over-limit size.
 */
export function peekFrameSize(buf: Uint8Array, offset: number, maxBytes: number): number {
  if (buf.length - offset < 4) return -1;
  const n = new DataView(buf.buffer, buf.byteOffset + offset, 4).getInt32(0);
  if (n < 0 || n > maxBytes) {
    throw new ProtocolDecodeError(`frame size ${n} outside 0..${maxBytes}`);
  }
  return n;
}
