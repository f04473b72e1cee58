// The Authorizer the front doors ask, kept in step with the ACLs applied from the metadata log:
// rebuilt from the store's table when its ACL generation moved (a record applied here, from any
// broker, or a snapshot restored), so a check costs no SQLite read while nothing changes.
import { Authorizer } from "./authorizer.ts";
import type { AclBinding } from "./authorizer.ts";

export interface AclSource {
  aclBindings(): AclBinding[];
  aclGeneration(): number;
}

export class LiveAuthorizer {
  #current: Authorizer | undefined;
  #generation = -1;

  constructor(
    private readonly source: AclSource,
    private readonly superUsers: ReadonlySet<string>,
  ) {}

  get(): Authorizer {
    const g = this.source.aclGeneration();
    if (this.#current === undefined || g !== this.#generation) {
      // Read the generation before the table: a change landing in between reloads again next time.
      this.#current = new Authorizer(this.source.aclBindings(), this.superUsers);
      this.#generation = g;
    }
    return this.#current;
  }
}
