-- AlterTable
ALTER TABLE "UpstreamServer" ADD COLUMN     "discoveredAt" TIMESTAMP(3);
