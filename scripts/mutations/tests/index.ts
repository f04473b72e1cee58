// The test suite's planted bugs (issue #21): bugs in code no simulator runs (the Kafka handlers,
// HTTP, auth, groups, storage edges, the CLI; replication's shells and rules, reassignment, SASL,
// TLS and ACLs), each caught by unit or integration tests named in
// `tests`. Run them with `npm run mutate -- --suite tests` (docs/mutation.md); CI only checks that
// their edits still apply.
import type { Mutation } from "../types.ts";
import { FIXED_BUGS } from "./fixed-bugs.ts";
import { HTTP_AUTH_CLI } from "./http.ts";
import { KAFKA } from "./kafka.ts";
import { MORE } from "./more.ts";
import { PROTOCOL_CLI } from "./protocol-cli.ts";
import { REPLICATION_TESTS } from "./replication.ts";
import { SECURITY } from "./security.ts";
import { STORAGE_GROUPS } from "./storage-groups.ts";

export const TESTS: readonly Mutation[] = [
  ...KAFKA,
  ...HTTP_AUTH_CLI,
  ...STORAGE_GROUPS,
  ...REPLICATION_TESTS,
  ...SECURITY,
  ...MORE,
  ...PROTOCOL_CLI,
  ...FIXED_BUGS,
];
