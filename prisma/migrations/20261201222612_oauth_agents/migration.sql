-- AlterTable
ALTER TABLE "Agent" ADD COLUMN     "oauthClientId" TEXT,
ADD COLUMN     "oauthIssuer" TEXT,
ADD COLUMN     "pendingSince" TIMESTAMP(3);

-- CreateIndex
CREATE UNIQUE INDEX "Agent_oauthIssuer_oauthClientId_key" ON "Agent"("oauthIssuer", "oauthClientId");
