/**
 * The policy file's optional `servers:` section: the upstream MCP servers the gateway fronts, as code. A server
 * is its name (the namespace of its tools), its transport (a URL, or a command with arguments), the folder its
 * path arguments resolve under, and a one-line summary template per tool. Secrets never appear in the file:
 * every credential and environment value is a reference, `${env:NAME}` (an environment variable of Countersign's
 * process, read when the gateway connects) or `${stored}` (the value already stored, entered in the console); a
 * literal value is refused at its line and column.
 *
 * The section is additive: importing registers the servers it names and updates them to what it says; a server
 * it does not name is left as it is (remove servers in the console).
 */
import { z } from "zod";
import type { Tx } from "../audit/append";
import { ENV_REFERENCE, STORED_VALUE, connectionOfInput, hasUserinfo, saveUpstreamIn, storedSecrets, type UpstreamCredentials } from "../gateway/servers";
import { probeUpstreamTools } from "../gateway/connections";
import { setSummaryTemplate, setSummaryTemplateIn, snapshotOf, unregisteredToolDefs } from "../gateway/discover";
import type { ToolDef } from "../tools/types";
import type { ToolSnapshot } from "../gateway/source";
import { summaryTemplateProblem } from "../gateway/summary";
import { digest } from "../canonical";
import { db } from "../db/client";

/** A server as the file says it (and as export writes it). */
export type ServerSpec = {
  name: string;
  transport: "streamable-http" | "stdio";
  enabled: boolean;
  url?: string;
  credentials?: UpstreamCredentials;
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  root?: string;
  pathArgs: string[];
  summaries: Record<string, string>;
};

export const FileServer = z
  .object({
    name: z.string(),
    transport: z.enum(["streamable-http", "stdio"]),
    enabled: z.boolean().default(true),
    url: z.string().optional(),
    credentials: z.union([z.object({ bearer: z.string() }).strict(), z.object({ header: z.string(), value: z.string() }).strict()]).optional(),
    command: z.string().optional(),
    args: z.array(z.string()).optional(),
    env: z.record(z.string(), z.string()).optional(),
    root: z.string().optional(),
    path_arguments: z.array(z.string()).default([]),
    summaries: z.record(z.string(), z.string()).default({}),
  })
  .strict();
export type FileServer = z.infer<typeof FileServer>;

type Path = (string | number)[];
export type ServerProblem = { path: Path; message: string };

const isReference = (v: string) => ENV_REFERENCE.test(v) || v === STORED_VALUE;
const LITERAL = "a literal secret is refused: refer to an environment variable, e.g. ${env:NAME} (or ${stored} to keep the value stored in Countersign)";

/** The file's server as a spec, or its problems (literal secrets, fields of the other transport, duplicates). */
export function serverSpecsOf(servers: FileServer[]): { specs: ServerSpec[]; problems: ServerProblem[] } {
  const problems: ServerProblem[] = [];
  const specs: ServerSpec[] = [];
  const names = new Set<string>();
  servers.forEach((s, i) => {
    const at = (...p: Path) => [i, ...p];
    const before = problems.length;
    if (names.has(s.name)) problems.push({ path: at("name"), message: `two servers are named ${s.name}` });
    names.add(s.name);
    if (s.credentials) {
      const key = "bearer" in s.credentials ? "bearer" : "value";
      const v = "bearer" in s.credentials ? s.credentials.bearer : s.credentials.value;
      if (!isReference(v)) problems.push({ path: at("credentials", key), message: LITERAL });
    }
    for (const [k, v] of Object.entries(s.env ?? {})) if (!isReference(v)) problems.push({ path: at("env", k), message: LITERAL });
    if (s.url && hasUserinfo(s.url)) problems.push({ path: at("url"), message: "credentials in the URL are refused: use credentials with ${env:NAME}" });
    const other = s.transport === "stdio" ? (["url", "credentials"] as const) : (["command", "args", "env"] as const);
    for (const k of other) if (s[k] !== undefined) problems.push({ path: at(k), message: `a ${s.transport} server has no ${k}` });
    if (problems.length > before) return;
    specs.push({
      name: s.name,
      transport: s.transport,
      enabled: s.enabled,
      ...(s.transport === "streamable-http" ? { url: s.url ?? "", ...(s.credentials ? { credentials: s.credentials } : {}) } : { command: s.command ?? "", args: s.args ?? [], env: s.env ?? {} }),
      ...(s.root ? { root: s.root } : {}),
      pathArgs: s.path_arguments,
      summaries: s.summaries,
    });
  });
  return { specs, problems };
}

/** The upstream input saveUpstream validates (the field names of the file mapped back on a problem). */
export function upstreamInputOf(spec: ServerSpec): Record<string, unknown> {
  const common = { name: spec.name, enabled: spec.enabled, pathArgs: spec.pathArgs, ...(spec.root ? { root: spec.root } : {}) };
  return spec.transport === "stdio"
    ? { ...common, transport: "stdio", command: spec.command, args: spec.args ?? [], env: spec.env ?? {} }
    : { ...common, transport: "streamable-http", url: spec.url, ...(spec.credentials ? { credentials: spec.credentials } : {}) };
}

const sortedRecord = (r: Record<string, string>) => Object.fromEntries(Object.keys(r).sort().map((k) => [k, r[k]]));

/** A server as the file writes it: stable key order, empty parts left out. */
export function serverOut(spec: ServerSpec): Record<string, unknown> {
  const out: Record<string, unknown> = { name: spec.name, transport: spec.transport };
  if (!spec.enabled) out.enabled = false;
  if (spec.transport === "streamable-http") {
    out.url = spec.url;
    if (spec.credentials) out.credentials = "bearer" in spec.credentials ? { bearer: spec.credentials.bearer } : { header: spec.credentials.header, value: spec.credentials.value };
  } else {
    out.command = spec.command;
    if (spec.args?.length) out.args = spec.args;
    if (spec.env && Object.keys(spec.env).length) out.env = sortedRecord(spec.env);
  }
  if (spec.root) out.root = spec.root;
  if (spec.pathArgs.length) out.path_arguments = spec.pathArgs;
  if (Object.keys(spec.summaries).length) out.summaries = sortedRecord(spec.summaries);
  return out;
}

const asReference = (v: string) => (ENV_REFERENCE.test(v) ? v : STORED_VALUE);

/** The registered servers as specs: a secret stored as a reference is written as it; a stored value as ${stored}. */
export async function currentServerSpecs(client: Pick<Tx, "upstreamServer"> = db()): Promise<ServerSpec[]> {
  const rows = await client.upstreamServer.findMany({ include: { tools: { orderBy: { name: "asc" } } }, orderBy: { name: "asc" } });
  return rows.map((row) => {
    const secrets = storedSecrets(row);
    const c = secrets.credentials;
    const summaries = Object.fromEntries(row.tools.filter((t) => t.summaryTemplate).map((t) => [t.name, t.summaryTemplate!]));
    return {
      name: row.name,
      transport: row.transport as ServerSpec["transport"],
      enabled: row.enabled,
      ...(row.transport === "streamable-http"
        ? { url: row.url ?? "", ...(c ? { credentials: "bearer" in c ? { bearer: asReference(c.bearer) } : { header: c.header, value: asReference(c.value) } } : {}) }
        : { command: row.command ?? "", args: row.args as string[], env: Object.fromEntries(Object.entries(secrets.env).map(([k, v]) => [k, asReference(v)])) }),
      ...(row.root ? { root: row.root } : {}),
      pathArgs: row.pathArgs as string[],
      summaries,
    };
  });
}

/** What an import does to the servers: those it registers, and those it changes (with the fields that change). */
export type ServersDiff = { added: string[]; changed: { name: string; fields: string[] }[] };

function fieldsOf(spec: ServerSpec): Record<string, unknown> {
  const o = serverOut(spec);
  delete o.name;
  return { enabled: true, ...o };
}

export function diffServers(current: ServerSpec[], incoming: ServerSpec[]): ServersDiff {
  const byName = new Map(current.map((s) => [s.name, fieldsOf(s)]));
  const diff: ServersDiff = { added: [], changed: [] };
  for (const s of [...incoming].sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const before = byName.get(s.name);
    if (!before) {
      diff.added.push(s.name);
      continue;
    }
    const after = fieldsOf(s);
    const fields = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((f) => digest(before[f] ?? null) !== digest(after[f] ?? null)).sort();
    if (fields.length) diff.changed.push({ name: s.name, fields });
  }
  return diff;
}

/**
 * The summaries' problems against the tools discovered so far and those `listed` by servers not registered yet (a
 * summary needs its tool's input schema to check its placeholders). `where` names servers[i].summaries[tool].
 */
export async function summaryProblems(specs: ServerSpec[], listed: ListedTool[] = []): Promise<{ server: number; tool: string; message: string }[]> {
  const out: { server: number; tool: string; message: string }[] = [];
  if (!specs.some((s) => Object.keys(s.summaries).length)) return out;
  const stored = await db().upstreamTool.findMany({ select: { name: true, accepted: true, server: { select: { name: true } } } });
  const tools = [...stored, ...listed.map((t) => ({ name: t.tool, accepted: t.snapshot as unknown, server: { name: t.server } }))];
  specs.forEach((s, i) => {
    for (const [tool, template] of Object.entries(s.summaries)) {
      const row = tools.find((t) => t.server.name === s.name && t.name === tool);
      if (!row) {
        out.push({ server: i, tool, message: `${s.name} has no tool ${tool}` });
        continue;
      }
      const problem = summaryTemplateProblem(template, row.accepted as ToolSnapshot);
      if (problem) out.push({ server: i, tool, message: problem });
    }
  });
  return out;
}

/** Registers and updates the servers of `diff` and sets their tools' summaries, in the caller's transaction. */
export async function applyServers(tx: Tx, incoming: ServerSpec[], diff: ServersDiff, actor: string, now: Date): Promise<string[]> {
  const touched = [...diff.added, ...diff.changed.map((c) => c.name)].sort();
  for (const name of touched) {
    const spec = incoming.find((s) => s.name === name)!;
    await saveUpstreamIn(tx, upstreamInputOf(spec), actor, now);
    const tools = await tx.upstreamTool.findMany({ where: { server: { name } }, select: { name: true, summaryTemplate: true } });
    for (const t of tools) {
      const wanted = spec.summaries[t.name] ?? null;
      if (wanted !== t.summaryTemplate) await setSummaryTemplateIn(tx, name, t.name, wanted, actor, now);
    }
  }
  return touched;
}

/** A tool a server not registered yet lists, as its snapshot would be recorded. */
export type ListedTool = { server: string; tool: string; snapshot: ToolSnapshot };

export type NewServerTools = {
  /** The tools as the catalog will offer them once the server is registered and discovered. */
  defs: ToolDef[];
  listed: ListedTool[];
  /** Servers whose tools could not be listed (not reachable, a secret not at hand): servers[i] and why. */
  unlisted: { server: number; message: string }[];
};

/**
 * The tools of the file's enabled servers that are not registered yet (`registered` names those that are), listed
 * from the servers themselves through connections of their own that are closed at once (a stdio server is started
 * and stopped again; nothing is recorded). So the import that registers a server checks the policies, test cases
 * and summaries that name its tools, rather than refusing them until the server's tools are discovered.
 */
export async function toolsOfNewServers(specs: ServerSpec[], registered: ReadonlySet<string>): Promise<NewServerTools> {
  const out: NewServerTools = { defs: [], listed: [], unlisted: [] };
  for (const [i, spec] of specs.entries()) {
    if (registered.has(spec.name) || !spec.enabled) continue;
    try {
      const tools = await probeUpstreamTools(connectionOfInput(upstreamInputOf(spec)));
      out.defs.push(...unregisteredToolDefs({ name: spec.name, pathArgs: spec.pathArgs, root: spec.root ?? null }, tools));
      out.listed.push(...tools.map((t) => ({ server: spec.name, tool: t.name, snapshot: snapshotOf(t) })));
    } catch (e) {
      const why = e instanceof Error && e.constructor.name !== "Error" ? e.message : "the server could not be reached";
      out.unlisted.push({ server: i, message: `${spec.name}: its tools could not be listed (${why}), so nothing in this file may name them yet` });
    }
  }
  return out;
}

/**
 * After a new server's first discovery: the summaries the file gives its tools, set as `applyServers` sets those
 * of tools already discovered (each change audited).
 */
export async function applySummariesOfDiscovered(spec: ServerSpec, actor: string, now: Date): Promise<void> {
  if (Object.keys(spec.summaries).length === 0) return;
  const tools = await db().upstreamTool.findMany({ where: { server: { name: spec.name } }, select: { name: true, summaryTemplate: true } });
  for (const t of tools) {
    const wanted = spec.summaries[t.name] ?? null;
    if (wanted !== t.summaryTemplate) await setSummaryTemplate(spec.name, t.name, wanted, actor, now);
  }
}
