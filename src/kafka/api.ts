// One served Kafka API: its key, the versions the listener serves (and lists in ApiVersions)
// and its handler, declared together in one file per API under handlers/. The registry
// (handlers/index.ts) builds ApiVersions and the dispatch table from these declarations.
import { apiName, codecVersions } from "../protocol/kafka/index.ts";
import type { Handler } from "./context.ts";

export interface KafkaApi {
  readonly apiKey: number;
  /** The versions served, inclusive; ApiVersions lists exactly these. */
  readonly versions: readonly [number, number];
  /** Group APIs wait for the group coordinator to start (it replays its topic first). */
  readonly needsGroups: boolean;
  readonly handle: Handler;
}

export interface ApiDeclaration {
  readonly apiKey: number;
  readonly versions: readonly [number, number];
  readonly needsGroups?: boolean;
  readonly handle: Handler;
}

/** Declares a served API; a range the codec cannot encode is a bug, refused at load. */
export function defineHandler(d: ApiDeclaration): KafkaApi {
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
    handle: d.handle,
  };
}
