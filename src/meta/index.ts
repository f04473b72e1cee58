// Public surface of the metadata layer; other modules import from here only.
export { IdentityError, MetaError } from "./errors.ts";
export {
  ensureIdentity,
  type Identity,
  type IdentityOptions,
  isValidClusterId,
  META_PROPERTIES,
  newClusterId,
} from "./identity.ts";
export {
  embeddedMigrations,
  type MetaDb,
  type Migration,
  openMetaDb,
  runMigrations,
} from "./migrate.ts";
export { type MetadataRecord, parseRecord, type PartitionAssignment } from "./records.ts";
export { appliedIndex, applyOrSkip, applyRecord, type MetaConn } from "./apply.ts";
export { parseTablesImage, restoreTables, snapshotTables } from "./snapshot.ts";
export { LOCAL_TERM, LocalMetadataLog, type LogEntry, type MetadataLog } from "./log.ts";
export type { GroupInfo, GroupOffset } from "./groups.ts";
export {
  type BrokerInfo,
  type BrokerRegistration,
  META_DB_FILE,
  MetadataStore,
  type PartitionChange,
  type PartitionInfo,
  type StoreOptions,
  type TopicInfo,
  type WriteOptions,
} from "./store.ts";
export {
  CONFIG_SOURCE_CODE,
  CONFIG_TYPE_CODE,
  type ConfigSource,
  type DescribedTopicConfig,
  describeTopicConfig,
  normalizeTopicDefaults,
  type ResolvedTopicConfig,
  resolveTopicConfig,
  TOPIC_CONFIGS,
  type TopicConfigDef,
  validateTopicConfig,
  validateTopicConfigs,
} from "./topic-configs.ts";
export { MAX_TOPIC_NAME_LENGTH, topicNamesCollide, validateTopicName } from "./topic-names.ts";
export {
  isUserMechanism,
  MAX_SCRAM_ITERATIONS,
  MIN_SCRAM_ITERATIONS,
  type StoredScramCredential,
  USER_MECHANISMS,
  type UserCredentialInfo,
  type UserMechanism,
  userNameProblem,
} from "./users.ts";
