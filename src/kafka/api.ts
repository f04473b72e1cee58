// One served Kafka API: its key, the versions the listener serves (and lists in ApiVersions)
// and its handler, declared together in one file per API under handlers/. The registry
// (handlers/index.ts) builds ApiVersions and the dispatch table from these declarations.
import { apiName, codecVersions, type KafkaMessages } from "../protocol/kafka/index.ts";
import type { Handler, KafkaContext, RequestContext } from "./context.ts";

export interface KafkaApi {
  readonly apiKey: number;
  /** The versions served, inclusive; ApiVersions lists exactly these. */
  readonly versions: readonly [number, number];
  /** Group APIs wait for the group coordinator to start (it replays its topic first). */
  readonly needsGroups: boolean;
  readonly handle: Handler;
}

/** An API key with a schema, whose request and response types are generated. */
export type SchemaKey = keyof KafkaMessages;
/** The decoded request body of an API (every version's fields; defaults where absent). */
export type RequestOf<K extends SchemaKey> = KafkaMessages[K]["request"];
/** The response body an API's handler builds (fields of other versions are dropped). */
export type ResponseOf<K extends SchemaKey> = KafkaMessages[K]["response"];

/** A handler of one API: typed request in, typed response (or null for no response) out. */
export type ApiHandler<K extends SchemaKey> = (
  ctx: KafkaContext,
  req: RequestContext<RequestOf<K>>,
) => ResponseOf<K> | null | Promise<ResponseOf<K> | null>;

export interface ApiDeclaration<K extends SchemaKey> {
  readonly apiKey: K;
  readonly versions: readonly [number, number];
  readonly needsGroups?: boolean;
  readonly handle: ApiHandler<K>;
}

/** Declares a served API; a range the codec cannot encode is a bug, refused at load. */
export function defineHandler<K extends SchemaKey>(d: ApiDeclaration<K>): KafkaApi {
  const codec = codecVersions(d.apiKey);
  const [min, max] = d.versions;
  if (!codec || min > max || min < codec[0] || max > codec[1]) {
    throw new Error(
      `${apiName(d.apiKey)} v${min}-${max}: outside the schema's versions ${codec?.join("-")}`,
    );
  }
  return {
    apiKey: d.apiKey,
    versions: [min, max],
    needsGroups: d.needsGroups ?? false,
    // The dispatcher hands each handler the body decoded with its own API's schema.
    handle: d.handle as unknown as Handler,
  };
}
