-- CreateTable
CREATE TABLE "AuditHead" (
    "id" INTEGER NOT NULL DEFAULT 1,
    "hash" TEXT NOT NULL,
    "prevHash" TEXT NOT NULL,

    CONSTRAINT "AuditHead_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "SubmissionIntent_agentId_createdAt_idx" ON "SubmissionIntent"("agentId", "createdAt");

-- The head starts at the newest event already in the trail (none: the first append starts from genesis).
INSERT INTO "AuditHead" ("id", "hash", "prevHash")
SELECT 1, "hash", "prevHash" FROM "AuditEvent" ORDER BY "seq" DESC LIMIT 1;
