-- CreateTable
CREATE TABLE "SlackLink" (
    "userId" TEXT NOT NULL,
    "slackUserId" TEXT NOT NULL,
    "linkedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "SlackLink_pkey" PRIMARY KEY ("userId")
);

-- CreateTable
CREATE TABLE "SlackLinkCode" (
    "codeHash" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "expiresAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "SlackLinkCode_pkey" PRIMARY KEY ("codeHash")
);

-- CreateTable
CREATE TABLE "SlackMessage" (
    "requestId" TEXT NOT NULL,
    "channel" TEXT NOT NULL,
    "ts" TEXT NOT NULL,
    "postedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "SlackMessage_pkey" PRIMARY KEY ("requestId")
);

-- CreateTable
CREATE TABLE "SlackSeenRequest" (
    "signature" TEXT NOT NULL,
    "seenAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "SlackSeenRequest_pkey" PRIMARY KEY ("signature")
);

-- CreateIndex
CREATE UNIQUE INDEX "SlackLink_slackUserId_key" ON "SlackLink"("slackUserId");

-- CreateIndex
CREATE UNIQUE INDEX "SlackLinkCode_userId_key" ON "SlackLinkCode"("userId");

-- CreateIndex
CREATE INDEX "SlackSeenRequest_seenAt_idx" ON "SlackSeenRequest"("seenAt");
