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
