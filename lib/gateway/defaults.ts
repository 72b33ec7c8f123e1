/**
 * A server's default posture from its tools' MCP annotations, written as ordinary policy: per-tool default
 * postures in the policy document (`defaults.tools`), which admins see and edit like any other. A tool with
 * `readOnlyHint` is allowed; one with `destructiveHint` is requestable by the named approver group; any other tool
 * is left to policy (no default is written for it). Tools that already have a default keep it.
 */
import { currentDocument, saveDocument } from "../policy/store";
import type { PostureSpec } from "../policy/document";
import { db } from "../db/client";
import { qualifiedName } from "./names";
import type { ToolSnapshot } from "./source";

export type AnnotationDefaults = { approvers: string; quorum?: number };

export function postureFromAnnotations(annotations: Record<string, unknown>, opts: AnnotationDefaults): PostureSpec | null {
  if (annotations.readOnlyHint === true) return "allow";
  if (annotations.destructiveHint === true) {
    return { requestable: { approvers: opts.approvers, quorum: opts.quorum ?? 1, deadline: "24h", validity: "1h", justification: false, reason: "This tool can change or delete data (the server marks it destructive) and needs an approval." } };
  }
  return null;
}

/** Writes the defaults for every accepted tool of `serverName`; returns the tools it set. */
export async function applyAnnotationDefaults(serverName: string, opts: AnnotationDefaults, actor: string, now: Date): Promise<string[]> {
  const tools = await db().upstreamTool.findMany({ where: { server: { name: serverName }, status: "active" }, orderBy: { name: "asc" } });
  const doc = await currentDocument();
  const defaults = { ...doc.body.defaults, tools: { ...doc.body.defaults.tools } };
  const set: string[] = [];
  for (const t of tools) {
    const name = qualifiedName(serverName, t.name);
    if (!name || name in defaults.tools) continue;
    const posture = postureFromAnnotations((t.accepted as ToolSnapshot).annotations ?? {}, opts);
    if (!posture) continue;
    defaults.tools[name] = posture;
    set.push(name);
  }
  if (set.length === 0) return set;
  const r = await saveDocument({ ...doc.body, defaults }, actor, now, { note: `Defaults for ${serverName} from its tools' annotations` });
  if (!r.ok) throw new Error(`The defaults did not save: ${r.problems.map((p) => p.message).join("; ")}`);
  return set;
}
