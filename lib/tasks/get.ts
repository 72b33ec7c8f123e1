/** tasks/get: the task, for the principal that created it only. A poll also advances the task when it is due. */
import { db } from "../db/client";
import { advanceTask } from "../execution/advance";
import { toView } from "./view";
import type { Principal, TaskView } from "./types";

export async function getTask(principal: Principal, taskId: string, now: Date): Promise<TaskView | null> {
  const owned = await db().task.findFirst({ where: { id: taskId, agentId: principal.agentId }, select: { id: true } });
  if (!owned) return null;
  await advanceTask(taskId, now);
  const t = await db().task.findUniqueOrThrow({ where: { id: taskId } });
  return toView(t);
}
