-- AlterTable
ALTER TABLE "SubmissionIntent" ADD COLUMN     "agentId" TEXT NOT NULL DEFAULT '';

-- AlterTable
ALTER TABLE "Task" ADD COLUMN     "inputRequests" JSONB;

-- CreateTable
CREATE TABLE "Clarification" (
    "id" TEXT NOT NULL,
    "taskId" TEXT NOT NULL,
    "requestId" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "question" TEXT NOT NULL,
    "askedBy" TEXT NOT NULL,
    "askedAt" TIMESTAMP(3) NOT NULL,
    "answer" JSONB,
    "answeredAt" TIMESTAMP(3),

    CONSTRAINT "Clarification_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ConsumedRequestState" (
    "nonce" TEXT NOT NULL,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ConsumedRequestState_pkey" PRIMARY KEY ("nonce")
);

-- CreateIndex
CREATE INDEX "Clarification_requestId_idx" ON "Clarification"("requestId");

-- CreateIndex
CREATE UNIQUE INDEX "Clarification_taskId_key_key" ON "Clarification"("taskId", "key");

-- CreateIndex
CREATE INDEX "ConsumedRequestState_expiresAt_idx" ON "ConsumedRequestState"("expiresAt");

-- CreateIndex
CREATE INDEX "SubmissionIntent_agentId_state_idx" ON "SubmissionIntent"("agentId", "state");

-- CreateIndex
CREATE INDEX "Task_agentId_createdAt_idx" ON "Task"("agentId", "createdAt");
