-- CreateIndex
CREATE INDEX "Task_retainUntil_idx" ON "Task"("retainUntil");

-- The snapshot purge (lib/policy/history.ts purgeCallRecords) reads only the records that still hold a snapshot:
-- without this partial index it would walk every older record whose snapshot is already gone, on every sweep.
-- The schema language cannot state a partial index: prisma/schema.prisma says so beside CallRecord.
CREATE INDEX "CallRecord_createdAt_snapshot_idx" ON "CallRecord"("createdAt") WHERE snapshot IS NOT NULL;
