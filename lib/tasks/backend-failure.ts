/**
 * Records that the approval backend failed a pending request (what an external backend reports as its `failed`
 * terminal state). The task then ends `failed` with a JSON-RPC error on its next advance, before any execution
 * claim (SEP "Lifecycle and task status"). The built-in inbox backend has no failure of its own; this is the hook
 * an automatic resolver (lib/mcp/conformance) uses to exercise that row of the lifecycle table.
 */
import { db } from "../db/client";
import { appendAudit } from "../audit/append";
import { enqueueNotifications } from "../notify/outbox";

export async function recordBackendFailure(requestId: string, note: string, now: Date): Promise<boolean> {
  return db().$transaction(async (tx) => {
    const n = await tx.approvalRequest.updateMany({ where: { id: requestId, status: "pending" }, data: { status: "failed", statusNote: note.slice(0, 200), decidedAt: now } });
    if (n.count !== 1) return false;
    const req = await tx.approvalRequest.findUniqueOrThrow({ where: { id: requestId } });
    await appendAudit(tx, { type: "request.failed", actor: "backend", taskId: req.taskId, requestId, data: { note: note.slice(0, 200) }, at: now });
    await enqueueNotifications(tx, requestId, "outcome", now);
    return true;
  });
}
