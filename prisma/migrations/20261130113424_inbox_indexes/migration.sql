-- CreateIndex
CREATE INDEX "ApprovalRequest_status_approverGroup_deadline_idx" ON "ApprovalRequest"("status", "approverGroup", "deadline");

-- CreateIndex
CREATE INDEX "ApprovalRequest_approverGroup_decidedAt_idx" ON "ApprovalRequest"("approverGroup", "decidedAt");

-- CreateIndex
CREATE INDEX "ApprovalRequest_decidedAt_idx" ON "ApprovalRequest"("decidedAt");

-- CreateIndex
CREATE INDEX "Review_reviewerId_idx" ON "Review"("reviewerId");
