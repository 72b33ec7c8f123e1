-- CreateTable
CREATE TABLE "UpstreamServer" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "transport" TEXT NOT NULL,
    "url" TEXT,
    "command" TEXT,
    "args" JSONB NOT NULL DEFAULT '[]',
    "credentials" TEXT,
    "env" TEXT,
    "envNames" JSONB NOT NULL DEFAULT '[]',
    "pathArgs" JSONB NOT NULL DEFAULT '[]',
    "root" TEXT,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "health" TEXT NOT NULL DEFAULT 'unknown',
    "healthNote" TEXT,
    "healthAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "UpstreamServer_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "UpstreamTool" (
    "id" TEXT NOT NULL,
    "serverId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "accepted" JSONB NOT NULL,
    "acceptedDigest" TEXT NOT NULL,
    "observed" JSONB,
    "observedDigest" TEXT,
    "status" TEXT NOT NULL DEFAULT 'active',
    "summaryTemplate" TEXT,
    "acceptedBy" TEXT,
    "acceptedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "UpstreamTool_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "UpstreamServer_name_key" ON "UpstreamServer"("name");

-- CreateIndex
CREATE UNIQUE INDEX "UpstreamTool_serverId_name_key" ON "UpstreamTool"("serverId", "name");

-- AddForeignKey
ALTER TABLE "UpstreamTool" ADD CONSTRAINT "UpstreamTool_serverId_fkey" FOREIGN KEY ("serverId") REFERENCES "UpstreamServer"("id") ON DELETE CASCADE ON UPDATE CASCADE;
