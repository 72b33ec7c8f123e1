-- AlterTable
ALTER TABLE "PolicyRule" ADD COLUMN     "escalateAfterSec" INTEGER,
ADD COLUMN     "fallbackGroup" TEXT;

-- AlterTable
ALTER TABLE "ApprovalRequest" ADD COLUMN     "escalateAt" TIMESTAMP(3),
ADD COLUMN     "escalatedAt" TIMESTAMP(3),
ADD COLUMN     "fallbackGroup" TEXT;

-- CreateTable
CREATE TABLE "Delegation" (
    "id" TEXT NOT NULL,
    "delegatorId" TEXT NOT NULL,
    "delegateId" TEXT NOT NULL,
    "startsAt" TIMESTAMP(3) NOT NULL,
    "endsAt" TIMESTAMP(3) NOT NULL,
    "endedAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Delegation_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "Delegation_delegateId_endsAt_idx" ON "Delegation"("delegateId", "endsAt");

-- CreateIndex
CREATE INDEX "Delegation_delegatorId_endsAt_idx" ON "Delegation"("delegatorId", "endsAt");

-- CreateIndex
CREATE INDEX "ApprovalRequest_status_escalateAt_idx" ON "ApprovalRequest"("status", "escalateAt");

-- CreateIndex
CREATE INDEX "ApprovalRequest_status_fallbackGroup_escalatedAt_idx" ON "ApprovalRequest"("status", "fallbackGroup", "escalatedAt");
