-- AlterTable
ALTER TABLE "CallRecord" ADD COLUMN     "snapshot" JSONB;
