/** tasks/get: the task, for the principal that created it only. A poll also advances the task when it is due. */
import { db } from "../db/client";
import { advanceTask } from "../execution/advance";
import { toView } from "./view";
import type { Principal, TaskView } from "./types";

export async function getTask(principal: Principal, taskId: string, now: Date): Promise<TaskView | null> {
  const owned = await db().task.findFirst({ where: { id: taskId, agentId: principal.agentId }, select: { id: true } });
  if (!owned) return null;
  const { pendingNote } = await advanceTask(taskId, now);
  const view = toView(await db().task.findUniqueOrThrow({ where: { id: taskId } }));
  // A request that cannot gather enough eligible reviewers says so (server-authored words) until it expires.
  if (pendingNote && view.status === "working") view.statusMessage = `${view.statusMessage} ${pendingNote}`;
  return view;
}
