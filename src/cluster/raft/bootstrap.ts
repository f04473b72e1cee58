// Initial persisted states: the first broker bootstraps the quorum, a joiner starts empty.
import { copyConfig } from "./config.ts";
import type { Config, PersistedState } from "./types.ts";
import { NONE } from "./types.ts";

/**
 * The persisted state of a freshly bootstrapped cluster: a snapshot at index 1, term 1 holding
 * the initial configuration and state-machine image. Every initial voter starts from it; a
 * node joining later starts from EMPTY_STATE and receives the leader's snapshot.
 */
export function bootstrapState(config: Config, data = ""): PersistedState {
  return {
    hardState: { term: 1, vote: NONE, commit: 1 },
    snapshot: { meta: { index: 1, term: 1, config: copyConfig(config) }, data },
    entries: [],
  };
}

export function emptyState(): PersistedState {
  return { hardState: { term: 0, vote: NONE, commit: 0 }, entries: [] };
}
