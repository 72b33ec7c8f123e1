-- Routines: functions and triggers, applied after the migrations on every start by lib/db/migrate.ts, in one
-- transaction (the migration engine cannot run a function body: it splits scripts at every semicolon). Each
-- statement is idempotent; what it creates must exist in every migrated database.

-- ChangeEpoch (prisma/schema.prisma): each statement that changes the form rules or the upstream catalog sets its
-- epoch to a new value of a sequence. The row is written in the changing transaction, so readers see the new value
-- exactly when they see the change; a sequence value is never reused (TRUNCATE ... RESTART IDENTITY leaves it), so
-- a value names one state of the rows even across tables emptied and filled again.
CREATE OR REPLACE FUNCTION "countersign_change_epoch"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "ChangeEpoch" ("name", "value") VALUES (TG_ARGV[0], nextval('"ChangeEpoch_value_seq"'))
  ON CONFLICT ("name") DO UPDATE SET "value" = EXCLUDED."value";
  RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER "PolicyRule_change_epoch" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "PolicyRule"
  FOR EACH STATEMENT EXECUTE FUNCTION "countersign_change_epoch"('rules');
CREATE OR REPLACE TRIGGER "UpstreamTool_change_epoch" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "UpstreamTool"
  FOR EACH STATEMENT EXECUTE FUNCTION "countersign_change_epoch"('catalog');
-- Not on "health", "healthNote", "healthAt" or "discoveredAt": a server's health and the sweeper's claim change
-- nothing the catalog is built from. A new column the catalog reads belongs in this list.
CREATE OR REPLACE TRIGGER "UpstreamServer_change_epoch" AFTER INSERT OR DELETE OR TRUNCATE ON "UpstreamServer"
  FOR EACH STATEMENT EXECUTE FUNCTION "countersign_change_epoch"('catalog');
CREATE OR REPLACE TRIGGER "UpstreamServer_update_change_epoch"
  AFTER UPDATE OF "id", "name", "transport", "url", "command", "args", "credentials", "env", "envNames", "pathArgs", "root", "enabled", "createdAt", "updatedAt" ON "UpstreamServer"
  FOR EACH STATEMENT EXECUTE FUNCTION "countersign_change_epoch"('catalog');

-- What an agent's authentication reads (lib/auth/agents.ts: the agent, its user, and the policy's head, which names
-- the policy document, the form rules' epoch and the catalog's) announces each change on the channel
-- countersign_changes, delivered when the changing transaction commits. A process that keeps authenticated agents in
-- memory (lib/auth/agent-cache.ts) forgets them all on each notification. Only the columns authentication reads.
CREATE OR REPLACE FUNCTION "countersign_announce_change"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('countersign_changes', TG_TABLE_NAME);
  RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER "Agent_announce" AFTER INSERT OR DELETE OR TRUNCATE ON "Agent"
  FOR EACH STATEMENT EXECUTE FUNCTION "countersign_announce_change"();
CREATE OR REPLACE TRIGGER "Agent_update_announce" AFTER UPDATE OF "id", "name", "tokenHash", "userId", "revokedAt", "pendingSince" ON "Agent"
  FOR EACH STATEMENT EXECUTE FUNCTION "countersign_announce_change"();
CREATE OR REPLACE TRIGGER "User_announce" AFTER INSERT OR DELETE OR TRUNCATE ON "User"
  FOR EACH STATEMENT EXECUTE FUNCTION "countersign_announce_change"();
CREATE OR REPLACE TRIGGER "User_update_announce" AFTER UPDATE OF "id", "name", "email", "role", "groups", "active" ON "User"
  FOR EACH STATEMENT EXECUTE FUNCTION "countersign_announce_change"();
CREATE OR REPLACE TRIGGER "PolicyDocument_announce" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "PolicyDocument"
  FOR EACH STATEMENT EXECUTE FUNCTION "countersign_announce_change"();
CREATE OR REPLACE TRIGGER "ChangeEpoch_announce" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "ChangeEpoch"
  FOR EACH STATEMENT EXECUTE FUNCTION "countersign_announce_change"();
