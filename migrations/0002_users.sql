CREATE TABLE `scram_credentials` (
	`user` text NOT NULL,
	`mechanism` text NOT NULL,
	`iterations` integer NOT NULL,
	`salt` text NOT NULL,
	`stored_key` text NOT NULL,
	`server_key` text NOT NULL,
	PRIMARY KEY(`user`, `mechanism`)
);
