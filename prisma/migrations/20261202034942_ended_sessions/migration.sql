-- CreateTable
CREATE TABLE "EndedSession" (
    "sid" TEXT NOT NULL,
    "until" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "EndedSession_pkey" PRIMARY KEY ("sid")
);

-- CreateIndex
CREATE INDEX "EndedSession_until_idx" ON "EndedSession"("until");
