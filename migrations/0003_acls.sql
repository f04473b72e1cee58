CREATE TABLE `acls` (
	`resource_type` integer NOT NULL,
	`resource_name` text NOT NULL,
	`pattern_type` integer NOT NULL,
	`principal` text NOT NULL,
	`host` text NOT NULL,
	`operation` integer NOT NULL,
	`permission` integer NOT NULL,
	PRIMARY KEY(`resource_type`, `resource_name`, `pattern_type`, `principal`, `host`, `operation`, `permission`)
);
