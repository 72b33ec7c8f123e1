/** Why an approved call did not run, in the words the re-check stored (the tool's own words or the policy's reason). */
import { db } from "../db/client";

export async function denialDetailOf(taskId: string): Promise<string | null> {
  const e = await db().auditEvent.findFirst({ where: { taskId, type: "task.denied" }, orderBy: { seq: "desc" }, select: { data: true } });
  const detail = e?.data && typeof e.data === "object" ? (e.data as { detail?: unknown }).detail : undefined;
  return typeof detail === "string" && detail ? detail : null;
}
