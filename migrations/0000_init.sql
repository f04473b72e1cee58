CREATE TABLE `brokers` (
	`node_id` integer PRIMARY KEY NOT NULL,
	`host` text NOT NULL,
	`kafka_port` integer NOT NULL,
	`http_port` integer NOT NULL,
	`cluster_port` integer NOT NULL,
	`rack` text,
	`fenced` integer NOT NULL,
	`epoch` integer NOT NULL,
	`registered_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `cluster` (
	`id` integer PRIMARY KEY NOT NULL,
	`cluster_id` text NOT NULL,
	`node_id` integer NOT NULL,
	`created_at` integer NOT NULL,
	CONSTRAINT "cluster_singleton" CHECK("cluster"."id" = 1)
);
--> statement-breakpoint
CREATE TABLE `group_offsets` (
	`group_id` text NOT NULL,
	`topic` text NOT NULL,
	`partition` integer NOT NULL,
	`offset` integer NOT NULL,
	`leader_epoch` integer NOT NULL,
	`metadata` text NOT NULL,
	`commit_ts` integer NOT NULL,
	`expire_ts` integer,
	PRIMARY KEY(`group_id`, `topic`, `partition`)
);
--> statement-breakpoint
CREATE INDEX `group_offsets_topic` ON `group_offsets` (`topic`);--> statement-breakpoint
CREATE TABLE `groups` (
	`group_id` text PRIMARY KEY NOT NULL,
	`protocol_type` text NOT NULL,
	`state` text NOT NULL,
	`generation` integer NOT NULL,
	`protocol` text,
	`leader` text,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `meta_state` (
	`id` integer PRIMARY KEY NOT NULL,
	`applied_index` integer NOT NULL,
	`applied_term` integer NOT NULL,
	CONSTRAINT "meta_state_singleton" CHECK("meta_state"."id" = 1)
);
--> statement-breakpoint
CREATE TABLE `metadata_log` (
	`idx` integer PRIMARY KEY NOT NULL,
	`term` integer NOT NULL,
	`record` text NOT NULL,
	`appended_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `partitions` (
	`topic_id` text NOT NULL,
	`partition` integer NOT NULL,
	`leader` integer NOT NULL,
	`leader_epoch` integer NOT NULL,
	`partition_epoch` integer NOT NULL,
	`replicas` text NOT NULL,
	`isr` text NOT NULL,
	PRIMARY KEY(`topic_id`, `partition`),
	FOREIGN KEY (`topic_id`) REFERENCES `topics`(`topic_id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `topics` (
	`topic_id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`internal` integer NOT NULL,
	`configs` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `topics_name_unique` ON `topics` (`name`);