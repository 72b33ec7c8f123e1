/**
 * tasks/get: the task, for the principal that created it only. A poll also advances the task when it is due. A
 * task waiting on a pending request costs two statements: its row, and the request's state with its eligible
 * reviewers.
 */
import { db } from "../db/client";
import { advanceTask } from "../execution/advance";
import { toView } from "./view";
import type { Principal, TaskView } from "./types";

export async function getTask(principal: Principal, taskId: string, now: Date): Promise<TaskView | null> {
  const owned = await db().task.findFirst({ where: { id: taskId, agentId: principal.agentId } });
  if (!owned) return null;
  // A task still waiting (or already terminal) is the row just read; only one that moved is read again.
  const { pendingNote, moved } = await advanceTask(owned, now);
  const view = toView(moved ? await db().task.findUniqueOrThrow({ where: { id: taskId } }) : owned);
  // A request that cannot gather enough eligible reviewers says so (server-authored words) until it expires.
  if (pendingNote && view.status === "working") view.statusMessage = `${view.statusMessage} ${pendingNote}`;
  return view;
}
