-- CreateTable
CREATE TABLE "ChangeEpoch" (
    "name" TEXT NOT NULL,
    "value" BIGINT NOT NULL,

    CONSTRAINT "ChangeEpoch_pkey" PRIMARY KEY ("name")
);

-- Each value is new (a sequence, never reset by TRUNCATE ... RESTART IDENTITY), so a value names one state of
-- the rows even across a table emptied and filled again. The row is written in the changing transaction: readers
-- see the new value exactly when they see the change.
CREATE SEQUENCE "ChangeEpoch_value_seq";

-- The triggers that keep it are in prisma/routines.sql (applied after the migrations: a function body holds
-- semicolons, which the migration engine splits scripts at).
INSERT INTO "ChangeEpoch" ("name", "value") VALUES ('rules', nextval('"ChangeEpoch_value_seq"')), ('catalog', nextval('"ChangeEpoch_value_seq"'));
