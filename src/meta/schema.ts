// The whole SQLite schema of the metadata layer, in one file: drizzle-kit generates the
// migrations in migrations/ from it (`npx drizzle-kit generate`). SQLite is a materialised view
// of the metadata log (plus group offsets from __consumer_offsets); nothing here is the source
// of truth except metadata_log today, which moves to the Raft log later.
import { sql } from "drizzle-orm";
import { check, index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import type { ReassignmentState } from "./records.ts";

/** This broker's identity (one row, id = 1); mirrors <dataDir>/meta.properties. */
export const cluster = sqliteTable("cluster", {
  id: integer("id").primaryKey(),
  clusterId: text("cluster_id").notNull(),
  nodeId: integer("node_id").notNull(),
  createdAt: integer("created_at").notNull(),
}, (t) => [check("cluster_singleton", sql`${t.id} = 1`)]);

export const brokers = sqliteTable("brokers", {
  nodeId: integer("node_id").primaryKey(),
  host: text("host").notNull(),
  kafkaPort: integer("kafka_port").notNull(),
  httpPort: integer("http_port").notNull(),
  clusterPort: integer("cluster_port").notNull(),
  rack: text("rack"),
  fenced: integer("fenced", { mode: "boolean" }).notNull(),
  /** Index of the registration record in the metadata log (Kafka's broker epoch). */
  epoch: integer("epoch").notNull(),
  registeredAt: integer("registered_at").notNull(),
});

export const topics = sqliteTable("topics", {
  /** Canonical lower-case UUID string. */
  topicId: text("topic_id").primaryKey(),
  name: text("name").notNull().unique(),
  internal: integer("internal", { mode: "boolean" }).notNull(),
  /** Topic-level overrides only, JSON object of name -> string value. */
  configs: text("configs", { mode: "json" }).$type<Record<string, string>>().notNull(),
  createdAt: integer("created_at").notNull(),
});

export const partitions = sqliteTable("partitions", {
  topicId: text("topic_id").notNull().references(() => topics.topicId, { onDelete: "cascade" }),
  partition: integer("partition").notNull(),
  /** -1 when the partition has no leader. */
  leader: integer("leader").notNull(),
  leaderEpoch: integer("leader_epoch").notNull(),
  /** Bumped on every change of replicas/ISR/leader (Kafka's partition epoch). */
  partitionEpoch: integer("partition_epoch").notNull(),
  replicas: text("replicas", { mode: "json" }).$type<number[]>().notNull(),
  isr: text("isr", { mode: "json" }).$type<number[]>().notNull(),
  /** A reassignment in flight (records.ts ReassignmentState); null when none. */
  reassignment: text("reassignment", { mode: "json" }).$type<ReassignmentState | null>(),
}, (t) => [primaryKey({ columns: [t.topicId, t.partition] })]);

export const groups = sqliteTable("groups", {
  groupId: text("group_id").primaryKey(),
  protocolType: text("protocol_type").notNull(),
  state: text("state").notNull(),
  generation: integer("generation").notNull(),
  protocol: text("protocol"),
  leader: text("leader"),
  updatedAt: integer("updated_at").notNull(),
});

export const groupOffsets = sqliteTable("group_offsets", {
  groupId: text("group_id").notNull(),
  topic: text("topic").notNull(),
  partition: integer("partition").notNull(),
  offset: integer("offset").notNull(),
  /** -1 when the committer did not send one. */
  leaderEpoch: integer("leader_epoch").notNull(),
  metadata: text("metadata").notNull(),
  commitTs: integer("commit_ts").notNull(),
  /** Null when the offset does not expire on its own. */
  expireTs: integer("expire_ts"),
}, (t) => [
  primaryKey({ columns: [t.groupId, t.topic, t.partition] }),
  index("group_offsets_topic").on(t.topic),
]);

/** The local metadata log (LocalMetadataLog); the Raft log replaces it later. */
export const metadataLog = sqliteTable("metadata_log", {
  index: integer("idx").primaryKey(),
  term: integer("term").notNull(),
  record: text("record").notNull(),
  appendedAt: integer("appended_at").notNull(),
});

/** One row (id = 1): how far the metadata log has been applied into the tables above. */
export const metaState = sqliteTable("meta_state", {
  id: integer("id").primaryKey(),
  appliedIndex: integer("applied_index").notNull(),
  appliedTerm: integer("applied_term").notNull(),
}, (t) => [check("meta_state_singleton", sql`${t.id} = 1`)]);

/**
 * SCRAM credentials of the listeners' users (users.ts), one per user and mechanism, from
 * UserScramCredential* metadata records. Base64 text; never a password.
 */
export const scramCredentials = sqliteTable("scram_credentials", {
  user: text("user").notNull(),
  /** "SCRAM-SHA-256" or "SCRAM-SHA-512". */
  mechanism: text("mechanism").notNull(),
  iterations: integer("iterations").notNull(),
  salt: text("salt").notNull(),
  storedKey: text("stored_key").notNull(),
  serverKey: text("server_key").notNull(),
}, (t) => [primaryKey({ columns: [t.user, t.mechanism] })]);

/**
 * ACL bindings (acls.ts), Kafka's model with Kafka's numbers, from AclCreated/AclDeleted
 * metadata records. A binding is its own key: CreateAcls of an existing one changes nothing.
 */
export const acls = sqliteTable("acls", {
  resourceType: integer("resource_type").notNull(),
  resourceName: text("resource_name").notNull(),
  patternType: integer("pattern_type").notNull(),
  principal: text("principal").notNull(),
  host: text("host").notNull(),
  operation: integer("operation").notNull(),
  permission: integer("permission").notNull(),
}, (t) => [
  primaryKey({
    columns: [
      t.resourceType,
      t.resourceName,
      t.patternType,
      t.principal,
      t.host,
      t.operation,
      t.permission,
    ],
  }),
]);
