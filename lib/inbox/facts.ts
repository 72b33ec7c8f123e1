/**
 * The facts that decide a request: the resource as it is now, read through the tool catalog (each tool's optional
 * `facts` hook knows its own resource; gateway tools have none), the other pending requests on the same resource,
 * what approving does, and whether the call can still run as asked. Read-only, for reviewers; policy never reads it.
 */
import { db } from "@/lib/db/client";
import { getTool } from "@/lib/tools/catalog";
import { ToolError, type PendingOnResource, type ToolEffect } from "@/lib/tools/types";
import { readBody, summaryOf } from "./body";

export type RequestFacts = {
  facts: { label: string; value: string }[];
  /** One line for the inbox row, or null when the tool shows no facts. */
  line: string | null;
  /** The call can no longer run as asked: why. */
  blocked: string | null;
  /** It can run, but not together with every other pending request on the resource. */
  caution: string | null;
  effect: ToolEffect;
  /** Other approval requests waiting on the same resource, oldest first. */
  related: PendingOnResource[];
};

type TaskRow = { id: string; tool: string; arguments: unknown; resourceType: string; resourceId: string };

const TASK_COLUMNS = { id: true, tool: true, arguments: true, resourceType: true, resourceId: true } as const;

/** What approving does when the tool does not say. */
export function genericEffect(tool: string): ToolEffect {
  return { does: `runs ${tool} with the arguments shown`, button: "run it" };
}

/**
 * The other approval requests still waiting on the resource `task` acts on (same tool, same canonical resource),
 * found through the call history's index (each approval task has a pending record there), still pending and in time.
 */
export async function pendingOnResource(task: Omit<TaskRow, "arguments">, now: Date): Promise<PendingOnResource[]> {
  const records = await db().callRecord.findMany({
    where: { tool: task.tool, resourceType: task.resourceType, resourceId: task.resourceId, status: "pending", taskId: { not: null } },
    select: { taskId: true, amountMinor: true, currency: true },
    orderBy: { createdAt: "asc" },
  });
  const others = records.filter((r) => r.taskId !== task.id);
  if (!others.length) return [];
  const requests = await db().approvalRequest.findMany({
    where: { taskId: { in: others.map((r) => r.taskId!) }, status: "pending", deadline: { gt: now } },
    select: { id: true, taskId: true, body: true },
  });
  return others.flatMap((rec) => {
    const r = requests.find((q) => q.taskId === rec.taskId);
    if (!r) return [];
    return [{ requestId: r.id, summary: summaryOf(readBody(r.body)), amountMinor: rec.amountMinor === null ? null : Number(rec.amountMinor), currency: rec.currency }];
  });
}

async function factsOfTask(task: TaskRow, now: Date): Promise<RequestFacts> {
  const tool = getTool(task.tool);
  const related = await pendingOnResource(task, now);
  const none: RequestFacts = { facts: [], line: null, blocked: null, caution: null, effect: genericEffect(task.tool), related };
  if (!tool) return none;
  const parsed = tool.schema.safeParse(task.arguments);
  if (!parsed.success) return none;
  const effect = tool.effect?.(parsed.data) ?? none.effect;
  if (!tool.facts) return { ...none, effect };
  try {
    const f = await tool.facts(parsed.data, { now, pending: related });
    return { facts: f.facts, line: f.line, blocked: f.blocked ?? null, caution: f.caution ?? null, effect: f.effect ?? effect, related };
  } catch (e) {
    if (e instanceof ToolError) return { ...none, effect, blocked: e.message };
    throw e;
  }
}

/** The deciding facts of the request whose task is `taskId`, read now. */
export async function factsFor(taskId: string, now: Date): Promise<RequestFacts | null> {
  const task = await db().task.findUnique({ where: { id: taskId }, select: TASK_COLUMNS });
  return task ? factsOfTask(task, now) : null;
}

/** The one-line facts for inbox rows, by task id: only for tools that show facts, so a gateway row costs nothing. */
export async function factLines(taskIds: string[], tools: string[], now: Date): Promise<Map<string, string>> {
  const wanted = taskIds.filter((_, i) => getTool(tools[i]!)?.facts);
  if (!wanted.length) return new Map();
  const tasks = await db().task.findMany({ where: { id: { in: wanted } }, select: TASK_COLUMNS });
  const lines = await Promise.all(
    tasks.map(async (t) => {
      const f = await factsOfTask(t, now);
      const line = f.blocked ? `Cannot run as asked: ${f.blocked}` : f.line;
      return [t.id, line] as const;
    }),
  );
  return new Map(lines.filter((l): l is readonly [string, string] => l[1] !== null));
}
