/**
 * The catalog of tools agents can call, from every tool source behind one interface: the built-in tools
 * (./builtin) and each upstream MCP server (lib/gateway/source). Policy, tasks and execution ask only this file;
 * none of them knows where a tool comes from.
 *
 * Upstream snapshots live in the database, so the catalog is not fixed for the life of the process. Reads are
 * synchronous against an in-memory copy; `syncCatalog()` (one cheap statement: a fingerprint of the accepted
 * snapshots) brings the copy up to date, and is awaited where a call, a listing, a re-evaluation or a policy
 * compilation begins, so a snapshot accepted through any server process is seen by all at their next call.
 */
import { z } from "zod";
import { digest } from "../canonical";
import { loadUpstreamTools, UPSTREAM_FINGERPRINT_SQL, upstreamFingerprint } from "../gateway/source";
import { builtinTools } from "./builtin";
import type { ToolDef } from "./types";
import type { PolicyTool } from "../policy/schema";

type Snapshot = { fingerprint: string | null; tools: ToolDef[] };

let upstream: Snapshot = { fingerprint: null, tools: [] };
let syncing: Promise<void> | null = null;

/**
 * The catalog's fingerprint as a scalar SQL subquery, so a statement that reads something else anyway (the policy
 * head, lib/policy/store) can bring it along, and pass it to syncCatalog.
 */
export const CATALOG_FINGERPRINT_SQL = UPSTREAM_FINGERPRINT_SQL;

/**
 * Brings the upstream part of the catalog up to date with the database: with `fingerprint` read just now by
 * another statement (CATALOG_FINGERPRINT_SQL), without a statement of its own while the catalog is unchanged.
 */
export async function syncCatalog(fingerprint?: string | null): Promise<void> {
  // A fingerprint names one state of the upstream rows; none (its row deleted) is never taken as current.
  if (fingerprint && fingerprint === upstream.fingerprint) return;
  // Changed (or not known yet): one reload at a time, each reading the fingerprint it stores before the tools, so
  // a change landing in between is seen at the next call.
  if (!syncing) {
    syncing = (async () => {
      const now = await upstreamFingerprint();
      if (!now || now !== upstream.fingerprint) upstream = { fingerprint: now, tools: await loadUpstreamTools() };
    })().finally(() => {
      syncing = null;
    });
  }
  return syncing;
}

function tools(): ToolDef[] {
  const builtin = builtinTools();
  return upstream.tools.length ? [...builtin, ...upstream.tools] : builtin;
}

/** A tool by its name as agents see it (held upstream tools included: callers check `held`). */
export function getTool(name: string): ToolDef | undefined {
  return tools().find((t) => t.name === name);
}

export function inputSchemaOf(tool: ToolDef): Record<string, unknown> {
  if (tool.inputSchema) return tool.inputSchema;
  let s = zodSchemas.get(tool);
  if (!s) {
    s = z.toJSONSchema(tool.schema) as Record<string, unknown>;
    zodSchemas.set(tool, s);
  }
  return s;
}
const zodSchemas = new WeakMap<ToolDef, Record<string, unknown>>();

/** Identifies the tool's implementation contract: name, input schema, resource mapping (and an upstream's accepted snapshot). */
export function toolVersion(tool: ToolDef): string {
  const base = { name: tool.name, inputSchema: inputSchemaOf(tool), mappingVersion: tool.mappingVersion };
  return digest(tool.contract === undefined ? base : { ...base, contract: tool.contract });
}

/**
 * The tools agents may be shown: every tool not held for review. With `held`, the held ones too (flagged), so
 * a call of a held tool is answered with why it is refused rather than as an unknown tool.
 */
export function listTools(opts: { held?: boolean } = {}): { name: string; title: string; description: string; inputSchema: Record<string, unknown>; held?: true }[] {
  return tools()
    .filter((t) => opts.held || !t.held)
    .map((t) => ({ name: t.name, title: t.title, description: t.description, inputSchema: inputSchemaOf(t), ...(t.held ? { held: true as const } : {}) }));
}

const catalogs = new Map<string, PolicyTool[]>();

/**
 * What policy knows of every tool: its input schema and the shape of the resource its mapping reads. Held tools
 * stay known to policy (with their accepted schema), so a policy that names them still compiles. The same array
 * is returned while the catalog is unchanged, so the policy cache's catalog key is computed once per catalog.
 */
/** A tool as policy compiles against it: its name, input schema and resource entity. */
export function policyToolOf(t: ToolDef): PolicyTool {
  return { name: t.name, inputSchema: inputSchemaOf(t), resourceEntity: t.policyResource.entity, resourceShape: t.policyResource.shape };
}

export function policyTools(): PolicyTool[] {
  const key = `${builtinTools().length}:${upstream.fingerprint ?? "none"}`;
  const hit = catalogs.get(key);
  if (hit) return hit;
  const catalog = tools().map(policyToolOf);
  if (catalogs.size >= 8) catalogs.delete(catalogs.keys().next().value!);
  catalogs.set(key, catalog);
  return catalog;
}
