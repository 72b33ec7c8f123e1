-- AlterTable
ALTER TABLE "WebhookDelivery" ADD COLUMN     "taskId" TEXT;

-- CreateIndex
CREATE INDEX "WebhookDelivery_taskId_idx" ON "WebhookDelivery"("taskId");

-- Deliveries written before this column: their task, from the payload (still plain text until sealed at start-up).
UPDATE "WebhookDelivery" SET "taskId" = "payload"->'data'->>'taskId'
WHERE "taskId" IS NULL AND jsonb_typeof("payload") = 'object';
