// What Kafka request handlers see: the broker services, the advertised address, and the
// request being handled. Handlers are plain functions of (context, request) → response body.
import type { GroupService } from "../core/group-service.ts";
import type { PartitionManager } from "../core/partition-manager.ts";
import type { MetadataStore } from "../meta/index.ts";
import type { Logger } from "../log.ts";
import type { Metrics } from "../core/metrics.ts";
import type { DecodedRequestHeader, Struct } from "../protocol/kafka/index.ts";
import type { ProducerIdAllocator } from "./producer-ids.ts";
import type { Principal } from "./principal.ts";
import type { LiveAuthorizer } from "../acl/live.ts";
import { errorCodeOf } from "../protocol/kafka/error-codes.ts";

export interface KafkaContext {
  readonly partitions: PartitionManager;
  readonly meta: MetadataStore;
  /** The group coordinator; reading it before `groupsStarted` has settled throws. */
  readonly groups: GroupService;
  /** Settles once the group coordinator runs: group requests of the first moments wait for it. */
  readonly groupsStarted: Promise<void>;
  readonly producerIds: ProducerIdAllocator;
  readonly log: Logger;
  /** The broker's Prometheus registry (shared with the HTTP front door). */
  readonly metrics: Metrics;
  /** Whether Metadata may create unknown topics when the client allows it. */
  readonly autoCreateTopics: boolean;
  /** Static broker settings described as broker configs (DescribeConfigs resource type 4). */
  readonly brokerSettings: readonly BrokerSetting[];
  /** --authorizer acl: requests are checked against the ACLs (src/kafka/authorize.ts). */
  readonly authorizer?: LiveAuthorizer;
  /** host:port clients are told (this broker). */
  advertised(): { host: string; port: number };
  /** The controller: the metadata quorum's leader (-1 while none is known). */
  controllerId(): number;
}

export interface BrokerSetting {
  name: string;
  value: string;
  /** Kafka's default: a value that differs is a static setting, with the default as a synonym. */
  defaultValue: string;
  /** DescribeConfigs ConfigType: 1 bool, 2 string, 3 int, 5 long. */
  typeCode: number;
  doc: string;
}

/** A request as its handler sees it; `B` is its API's generated request type. */
export interface RequestContext<B extends Struct = Struct> {
  readonly header: DecodedRequestHeader;
  readonly body: B;
  /** Identity of the connection (for group requests tied to it). */
  readonly connection: object;
  /** Remote address as Kafka prints it, e.g. "/127.0.0.1". */
  readonly clientHost: string;
  /**
   * Who the connection authenticated as (SASL user or TLS client certificate), what an authoriser
   * decides on; absent: User:ANONYMOUS.
   */
  readonly principal?: Principal;
  /**
   * Reusable buffers for response bytes. What `take` lends stays the handler's until the
   * response has been written to the socket (or the connection closed), unless given back first.
   */
  readonly buffers?: LentBuffers;
}

export interface LentBuffers {
  /** Null when the listener's lending cap is reached: use a path that needs no buffer. */
  take(size: number): Uint8Array | null;
  /** Return a buffer early (nothing may reference its bytes any more). */
  giveBack(buf: Uint8Array): void;
}

/**
 * A handler's answer: a response body, or null for no response at all (Produce acks=0).
 * A handler that wants the connection closed (failed acks=0 produce) throws CloseConnection.
 */
export type HandlerResult = Struct | null;
export type Handler = (
  ctx: KafkaContext,
  req: RequestContext,
) => HandlerResult | Promise<HandlerResult>;

/** Thrown by a handler when the only correct answer is closing the connection. */
export class CloseConnection extends Error {
  override readonly name = "CloseConnection";
}

/** Handlers read a thrown error's Kafka code with this (defined beside the one error table). */
export { errorCodeOf };

export function errorMessageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** A thrown error as an answer's errorCode (-1: UNKNOWN_SERVER_ERROR) and errorMessage. */
export function errorOf(e: unknown): { errorCode: number; errorMessage: string } {
  return { errorCode: errorCodeOf(e), errorMessage: errorMessageOf(e) };
}

/** The values that occur more than once (a request naming the same topic or key twice). */
export function repeated(values: readonly string[]): Set<string> {
  const seen = new Set<string>();
  const twice = new Set<string>();
  for (const v of values) (seen.has(v) ? twice : seen).add(v);
  return twice;
}

/**
 * Answers the items of a request that must refuse an item named twice (Kafka's controller): an
 * item whose key repeats is not served, and answered once, by `duplicate`, where it first stands;
 * the others are served in turn.
 */
export async function answerOnce<T, A>(
  items: readonly T[],
  key: (item: T) => string,
  duplicate: (item: T) => A,
  serve: (item: T) => A | Promise<A>,
): Promise<A[]> {
  const twice = repeated(items.map(key));
  const answered = new Set<string>();
  const out: A[] = [];
  for (const item of items) {
    const k = key(item);
    if (!twice.has(k)) out.push(await serve(item));
    else if (!answered.has(k)) {
      answered.add(k);
      out.push(duplicate(item));
    }
  }
  return out;
}
