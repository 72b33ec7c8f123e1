-- AlterTable
ALTER TABLE "PolicyRule" ADD COLUMN     "currency" TEXT;

-- CreateTable
CREATE TABLE "PolicyDocument" (
    "id" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "body" JSONB NOT NULL,
    "digest" TEXT NOT NULL,
    "note" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "createdBy" TEXT,

    CONSTRAINT "PolicyDocument_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "PolicyDocument_version_key" ON "PolicyDocument"("version");

-- Version 1 keeps what a database made before the policy language meant: no Cedar policies, and a call that no
-- rule matches runs. A fresh demo database gets the demo policy (default deny) as version 2 from the seed.
INSERT INTO "PolicyDocument" ("id", "version", "body", "digest", "note", "createdBy")
VALUES ('00000000-0000-4000-8000-000000000001', 1,
  '{"policies":"","defaults":{"posture":"allow","tools":{},"agents":{}},"history":[],"timeZones":[],"tests":[]}'::jsonb,
  'sha256:e0bab7ff4ac8bdec44f8f3ab7c4b1b7aa381a8a2fbf3f8de2028707b2922645b',
  'The rules of a database made before policy documents: calls no rule matches are allowed.', 'migration');
