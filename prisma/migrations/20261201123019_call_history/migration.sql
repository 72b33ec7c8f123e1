-- CreateTable
CREATE TABLE "CallRecord" (
    "id" TEXT NOT NULL,
    "tool" TEXT NOT NULL,
    "agentId" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "resourceType" TEXT NOT NULL,
    "resourceId" TEXT NOT NULL,
    "amountMinor" BIGINT,
    "currency" TEXT,
    "status" TEXT NOT NULL,
    "taskId" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "settledAt" TIMESTAMP(3),

    CONSTRAINT "CallRecord_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "CallRecord_taskId_key" ON "CallRecord"("taskId");

-- CreateIndex
CREATE INDEX "CallRecord_tool_resourceType_resourceId_createdAt_idx" ON "CallRecord"("tool", "resourceType", "resourceId", "createdAt");

-- CreateIndex
CREATE INDEX "CallRecord_tool_agentId_createdAt_idx" ON "CallRecord"("tool", "agentId", "createdAt");

-- CreateIndex
CREATE INDEX "CallRecord_tool_userId_createdAt_idx" ON "CallRecord"("tool", "userId", "createdAt");

-- CreateIndex
CREATE INDEX "CallRecord_tool_createdAt_idx" ON "CallRecord"("tool", "createdAt");

-- CreateIndex
CREATE INDEX "CallRecord_createdAt_idx" ON "CallRecord"("createdAt");

-- What Prisma cannot state: a known status, and money as an amount with its currency or neither.
ALTER TABLE "CallRecord" ADD CONSTRAINT "CallRecord_status_check" CHECK ("status" IN ('reserved', 'pending', 'executed', 'void'));
ALTER TABLE "CallRecord" ADD CONSTRAINT "CallRecord_money_check" CHECK (("amountMinor" IS NULL) = ("currency" IS NULL));
