/**
 * Discovery and pinning. Discovery lists a server's tools and compares each with the snapshot an admin accepted:
 *  - a tool seen for the first time is accepted as it is (it has no approvals yet), audited `upstream.tool-added`;
 *  - a tool whose description, input schema or annotations differ is held (`changed`, the new snapshot kept
 *    beside the accepted one), audited `upstream.tool-changed`, until an admin accepts it (`acceptToolChange`,
 *    audited `upstream.tool-accepted`); a tool that changes back to what was accepted is no longer held;
 *  - a tool the server no longer lists is `removed` (held the same way).
 * Every state change is one conditional update, so two processes discovering at once record each change once.
 */
import { randomUUID } from "node:crypto";
import type { Tool } from "@modelcontextprotocol/client";
import { appendAudit, type Tx } from "../audit/append";
import { db, Prisma } from "../db/client";
import { listUpstreamTools } from "./connections";
import { snapshotDigest, upstreamToolDef, type ToolSnapshot } from "./source";
import type { ToolDef } from "../tools/types";
import { summaryTemplateProblem } from "./summary";

export function snapshotOf(tool: Tool): ToolSnapshot {
  return {
    ...(tool.title ? { title: tool.title } : {}),
    description: tool.description ?? "",
    inputSchema: (tool.inputSchema ?? { type: "object" }) as Record<string, unknown>,
    annotations: (tool.annotations ?? {}) as Record<string, unknown>,
  };
}

/** The tools a server lists as the catalog would offer them, before the server is registered (nothing recorded). */
export function unregisteredToolDefs(server: { name: string; pathArgs: string[]; root: string | null }, listed: Tool[]): ToolDef[] {
  const row = { id: `unregistered:${server.name}`, name: server.name, enabled: true, pathArgs: server.pathArgs, root: server.root };
  return listed.flatMap((t) => {
    const snapshot = snapshotOf(t);
    const def = upstreamToolDef(row, { name: t.name, accepted: snapshot, acceptedDigest: snapshotDigest(snapshot), status: "active", summaryTemplate: null });
    return def ? [def] : [];
  });
}

export type DiscoveryReport = { added: string[]; changed: string[]; removed: string[]; unchanged: string[] };

export async function discoverServer(serverName: string, now: Date): Promise<DiscoveryReport> {
  const server = await db().upstreamServer.findUniqueOrThrow({ where: { name: serverName } });
  const listed = await listUpstreamTools(server.id);
  await db().upstreamServer.updateMany({ where: { id: server.id }, data: { discoveredAt: now } });
  return recordSnapshots(server.id, server.name, listed.map((t) => ({ name: t.name, snapshot: snapshotOf(t) })), now);
}

/** Compares what the upstream lists with the stored snapshots and records the differences. */
export async function recordSnapshots(serverId: string, serverName: string, listed: { name: string; snapshot: ToolSnapshot }[], now: Date): Promise<DiscoveryReport> {
  const report: DiscoveryReport = { added: [], changed: [], removed: [], unchanged: [] };
  const stored = new Map((await db().upstreamTool.findMany({ where: { serverId } })).map((t) => [t.name, t]));
  const seen = new Set<string>();
  for (const { name, snapshot } of listed) {
    seen.add(name);
    const d = snapshotDigest(snapshot);
    const row = stored.get(name);
    await db().$transaction(async (tx) => {
      if (!row) {
        const created = await tx.upstreamTool.createMany({
          data: [{ id: `ut_${randomUUID()}`, serverId, name, accepted: snapshot as unknown as Prisma.InputJsonValue, acceptedDigest: d, acceptedBy: "discovery", acceptedAt: now, updatedAt: now }],
          skipDuplicates: true,
        });
        if (created.count === 1) {
          report.added.push(name);
          await appendAudit(tx, { type: "upstream.tool-added", actor: "system", data: { server: serverName, tool: name, digest: d }, at: now });
        }
        return;
      }
      if (d === row.acceptedDigest) {
        if (row.status !== "active") {
          await tx.upstreamTool.updateMany({ where: { id: row.id, status: row.status }, data: { status: "active", observed: Prisma.DbNull, observedDigest: null, updatedAt: now } });
          await appendAudit(tx, { type: "upstream.tool-restored", actor: "system", data: { server: serverName, tool: name, digest: d }, at: now });
        }
        report.unchanged.push(name);
        return;
      }
      if (row.status === "changed" && row.observedDigest === d) {
        report.changed.push(name);
        return;
      }
      const n = await tx.upstreamTool.updateMany({
        where: { id: row.id, acceptedDigest: row.acceptedDigest, observedDigest: row.observedDigest },
        data: { status: "changed", observed: snapshot as unknown as Prisma.InputJsonValue, observedDigest: d, updatedAt: now },
      });
      if (n.count === 1) {
        report.changed.push(name);
        await appendAudit(tx, {
          type: "upstream.tool-changed",
          actor: "system",
          data: { server: serverName, tool: name, accepted: row.acceptedDigest, observed: d },
          at: now,
        });
      }
    });
  }
  for (const row of stored.values()) {
    if (seen.has(row.name) || row.status === "removed") continue;
    await db().$transaction(async (tx) => {
      const n = await tx.upstreamTool.updateMany({ where: { id: row.id, status: row.status }, data: { status: "removed", updatedAt: now } });
      if (n.count === 1) {
        report.removed.push(row.name);
        await appendAudit(tx, { type: "upstream.tool-removed", actor: "system", data: { server: serverName, tool: row.name }, at: now });
      }
    });
  }
  return report;
}

export class AcceptError extends Error {}

/**
 * An admin accepts the changed snapshot they reviewed (`observedDigest`, so a second change in between is not
 * accepted unseen). The tool is offered again; its contract changes, so approvals given for the old one do not apply.
 */
export async function acceptToolChange(serverName: string, tool: string, observedDigest: string, actor: string, now: Date): Promise<void> {
  await db().$transaction(async (tx) => {
    const row = await tx.upstreamTool.findFirst({ where: { name: tool, server: { name: serverName } } });
    if (!row) throw new AcceptError(`${serverName} has no tool ${tool}.`);
    if (row.status !== "changed" || !row.observed) throw new AcceptError(`${serverName}__${tool} has no change awaiting review.`);
    if (row.observedDigest !== observedDigest) throw new AcceptError(`${serverName}__${tool} changed again since it was reviewed; review the new version.`);
    const n = await tx.upstreamTool.updateMany({
      where: { id: row.id, status: "changed", observedDigest },
      data: { status: "active", accepted: row.observed as Prisma.InputJsonValue, acceptedDigest: observedDigest, observed: Prisma.DbNull, observedDigest: null, acceptedBy: actor, acceptedAt: now, updatedAt: now },
    });
    if (n.count !== 1) throw new AcceptError(`${serverName}__${tool} changed while it was being accepted; review it again.`);
    await appendAudit(tx, {
      type: "upstream.tool-accepted",
      actor,
      data: { server: serverName, tool, previous: row.acceptedDigest, accepted: observedDigest },
      at: now,
    });
  });
}

/**
 * Sets (or clears, with null) the one-line summary reviewers read for a tool, e.g. "write {path}": one line whose
 * placeholders name arguments of the tool's accepted input schema (summaryTemplateProblem). Audited.
 */
export async function setSummaryTemplate(serverName: string, tool: string, template: string | null, actor: string, now: Date): Promise<void> {
  await db().$transaction((tx) => setSummaryTemplateIn(tx, serverName, tool, template, actor, now));
}

export async function setSummaryTemplateIn(tx: Tx, serverName: string, tool: string, template: string | null, actor: string, now: Date): Promise<void> {
  const row = await tx.upstreamTool.findFirst({ where: { name: tool, server: { name: serverName } } });
  if (!row) throw new AcceptError(`${serverName} has no tool ${tool}.`);
  if (template !== null) {
    const problem = summaryTemplateProblem(template, row.accepted as unknown as ToolSnapshot);
    if (problem) throw new AcceptError(`${serverName}__${tool}: ${problem}`);
  }
  if ((row.summaryTemplate ?? null) === template) return;
  await tx.upstreamTool.updateMany({ where: { id: row.id }, data: { summaryTemplate: template, updatedAt: now } });
  await appendAudit(tx, { type: "upstream.summary-template", actor, data: { server: serverName, tool, previous: row.summaryTemplate ?? null, template }, at: now });
}
