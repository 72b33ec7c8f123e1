/**
 * The upstream tool source: every tool of every registered upstream server, as the catalog's ToolDefs, built from
 * the snapshots an admin accepted (lib/gateway/discover). Arguments are validated against the accepted JSON
 * Schema with a real JSON Schema validator; the tool's contract (toolVersion) includes the accepted snapshot's
 * digest, so a pending approval of a tool that changed does not execute.
 *
 * Resource mapping: by default an upstream call's resource is the tool with the canonical arguments digest. A
 * server may name path arguments with a root folder (a filesystem server): the resource is then those paths
 * resolved as the operating system would (`..`, symbolic links) relative to the root, re-resolved when the call
 * is forwarded; the resolved absolute paths are what the upstream receives.
 */
import { Validator, type Schema, type SchemaDraft } from "@cfworker/json-schema";
import { z } from "zod";
import { digest } from "../canonical";
import { db, Prisma } from "../db/client";
import { entityTypeName, type ResourceAttr } from "../policy/schema";
import { resolveUnderRoot } from "../tools/resolve-path";
import { ToolError, ToolInputError, type ToolDef } from "../tools/types";
import { sanitizeForModel } from "../sanitize";
import { callUpstream, connection, UpstreamUnavailableError } from "./connections";
import { qualifiedName } from "./names";

/** What is pinned of an upstream tool: a change in any of these holds the tool until an admin accepts it. */
export type ToolSnapshot = { title?: string; description: string; inputSchema: Record<string, unknown>; annotations: Record<string, unknown> };

export function snapshotDigest(s: ToolSnapshot): string {
  return digest({ title: s.title ?? null, description: s.description, inputSchema: s.inputSchema, annotations: s.annotations });
}

/**
 * The fingerprint of the upstream part of the catalog, as a scalar subquery another statement can carry: the
 * catalog's change epoch (prisma/schema.prisma, ChangeEpoch), new whenever a server is registered, changed or
 * removed, or a tool snapshot is accepted, held or given a summary template.
 */
export const UPSTREAM_FINGERPRINT_SQL = Prisma.sql`(SELECT value::text FROM "ChangeEpoch" WHERE name = 'catalog')`;

/** The fingerprint alone, in one statement. */
export async function upstreamFingerprint(): Promise<string | null> {
  const [row] = await db().$queryRaw<{ f: string | null }[]>`SELECT ${UPSTREAM_FINGERPRINT_SQL} AS f`;
  return row?.f ?? null;
}

function draftOf(schema: Record<string, unknown>): SchemaDraft {
  const s = typeof schema.$schema === "string" ? schema.$schema : "";
  if (s.includes("draft-04")) return "4";
  if (s.includes("draft-07") || s.includes("draft-06")) return "7";
  if (s.includes("2019-09")) return "2019-09";
  return "2020-12";
}

/** A zod schema that validates against a JSON Schema (so every tool is parsed and refused the same way). */
export function jsonSchemaValidator(schema: Record<string, unknown>): z.ZodType<Record<string, unknown>> {
  const validator = new Validator(schema as Schema, draftOf(schema), false);
  return z.record(z.string(), z.unknown()).superRefine((value, ctx) => {
    const r = validator.validate(value);
    if (r.valid) return;
    // The deepest errors say what is wrong; the wrappers ("properties", "allOf") only repeat it.
    const leaves = r.errors.filter((e) => !["properties", "allOf", "anyOf", "$ref", "items"].includes(e.keyword));
    for (const e of (leaves.length ? leaves : r.errors).slice(0, 5)) {
      const path = e.instanceLocation.replace(/^#\/?/, "").split("/").filter(Boolean);
      ctx.addIssue({ code: "custom", path, message: e.error.replace(/^Instance /, "").slice(0, 200) });
    }
  });
}

type ServerRow = { id: string; name: string; enabled: boolean; pathArgs: unknown; root: string | null };
type ToolRow = { name: string; accepted: unknown; acceptedDigest: string; status: string; summaryTemplate: string | null };

/** How many paths one list argument may name: each is resolved on the filesystem before policy decides. */
export const MAX_PATHS_PER_ARGUMENT = 256;

type PathArg = { name: string; required: boolean; list: boolean };

/** The server's path arguments this tool takes: a string (one path) or an array of strings (several). */
function pathArgsOf(server: ServerRow, snapshot: ToolSnapshot): PathArg[] {
  const props = (snapshot.inputSchema.properties ?? {}) as Record<string, { type?: unknown; items?: { type?: unknown } }>;
  const required = new Set(Array.isArray(snapshot.inputSchema.required) ? (snapshot.inputSchema.required as string[]) : []);
  const out: PathArg[] = [];
  for (const a of server.pathArgs as string[]) {
    const p = props[a];
    const list = p?.type === "array" && p.items?.type === "string";
    if (p?.type === "string" || list) out.push({ name: a, required: required.has(a), list });
  }
  return out;
}

/** The attribute naming every folder of a path argument's paths (and the paths themselves). */
export function foldersAttribute(arg: string): string {
  return `${arg}_within`;
}

/** "a/b/c.txt" -> ["a", "a/b", "a/b/c.txt"]; the root itself is ".". */
export function pathAndFolders(rel: string): string[] {
  if (rel === ".") return ["."];
  const parts = rel.split("/");
  return parts.map((_, i) => parts.slice(0, i + 1).join("/"));
}

type Resolved = { rel: string; abs: string };
/** Each path argument's resolution: one path for a string argument, a list for an array argument. */
type ResolvedArgs = Record<string, Resolved | Resolved[]>;

const relOf = (r: Resolved | Resolved[]): string | string[] => (Array.isArray(r) ? r.map((x) => x.rel) : r.rel);
const shown = (v: string | string[]): string => {
  if (!Array.isArray(v)) return v;
  return v.length <= 3 ? v.join(", ") : `${v.slice(0, 3).join(", ")} and ${v.length - 3} more`;
};

/** "{path}" and the like replaced by the (resolved) argument; anything else stays as written. */
function fill(template: string, args: Record<string, unknown>, resolved: Record<string, string | string[]>): string {
  return template.replace(/\{([A-Za-z0-9_]{1,64})\}/g, (whole, key: string) => {
    if (key in resolved) return shown(resolved[key]);
    const v = args[key];
    if (v === undefined) return whole;
    const text = typeof v === "string" ? v : JSON.stringify(v);
    return text.length > 80 ? `${text.slice(0, 79)}…` : text;
  });
}

export function upstreamToolDef(server: ServerRow, row: ToolRow): ToolDef<Record<string, unknown>> | null {
  const name = qualifiedName(server.name, row.name);
  if (!name) return null;
  const snapshot = row.accepted as ToolSnapshot;
  const paths = server.root ? pathArgsOf(server, snapshot) : [];
  const shape: Record<string, ResourceAttr> = { server: { type: "String" }, tool: { type: "String" }, argumentsDigest: { type: "String" } };
  for (const p of paths) {
    shape[p.name] = p.list ? { type: "StringSet", optional: !p.required, folders: foldersAttribute(p.name) } : { type: "String", optional: !p.required };
    shape[foldersAttribute(p.name)] = { type: "StringSet", optional: !p.required };
  }
  const held =
    !server.enabled
      ? `The upstream server ${server.name} is disabled; the tool did not run.`
      : row.status === "changed"
        ? `The tool ${name} changed upstream (its description, input schema or annotations) and awaits an admin's review; the tool did not run.`
        : row.status === "removed"
          ? `The upstream server ${server.name} no longer offers ${row.name}; the tool did not run.`
          : undefined;

  async function resolvePaths(args: Record<string, unknown>): Promise<ResolvedArgs> {
    const out: ResolvedArgs = {};
    for (const p of paths) {
      const v = args[p.name];
      if (typeof v === "string" && !p.list) out[p.name] = await resolveUnderRoot(server.root!, v);
      else if (Array.isArray(v) && p.list) {
        if (v.length > MAX_PATHS_PER_ARGUMENT) throw new ToolInputError(`${p.name} names ${v.length} paths; at most ${MAX_PATHS_PER_ARGUMENT} in one call.`);
        const each: Resolved[] = [];
        for (const x of v) {
          if (typeof x !== "string") throw new ToolInputError(`${p.name} must list paths as text.`);
          each.push(await resolveUnderRoot(server.root!, x));
        }
        out[p.name] = each;
      }
    }
    return out;
  }
  // One id for every spelling of the same targets: the resolved paths, in the order the call names them.
  const idOf = (args: Record<string, unknown>, resolved: ResolvedArgs) => {
    const names = Object.keys(resolved);
    const text = (r: Resolved | Resolved[]) => (Array.isArray(r) ? JSON.stringify(r.map((x) => x.rel)) : r.rel);
    if (names.length === 0) return `${name}:${digest(args)}`;
    if (names.length === 1) return text(resolved[names[0]]);
    return names.map((n) => `${n}=${text(resolved[n])}`).join(" ");
  };

  return {
    name,
    title: snapshot.title ? sanitizeForModel(snapshot.title, 120) : name,
    // Upstream text is untrusted: what reaches the model is sanitized (React escapes it for reviewers).
    description: sanitizeForModel(`${server.name}: ${snapshot.description}`, 2000),
    schema: jsonSchemaValidator(snapshot.inputSchema),
    inputSchema: snapshot.inputSchema,
    contract: row.acceptedDigest,
    held,
    mappingVersion: 2,
    policyResource: { entity: entityTypeName(`upstream ${server.name} ${row.name}`), shape },
    async resource(args) {
      const resolved = await resolvePaths(args);
      const properties: Record<string, string | string[]> = { server: server.name, tool: row.name, argumentsDigest: digest(args) };
      for (const [k, r] of Object.entries(resolved)) {
        properties[k] = relOf(r);
        properties[foldersAttribute(k)] = [...new Set((Array.isArray(r) ? r : [r]).flatMap((x) => pathAndFolders(x.rel)))].sort();
      }
      return { type: paths.length ? "upstream-path" : "upstream-call", id: idOf(args, resolved), properties };
    },
    summary(args, resource) {
      const resolved: Record<string, string | string[]> = {};
      for (const p of paths) {
        const v = resource.properties[p.name];
        if (typeof v === "string" || Array.isArray(v)) resolved[p.name] = v;
      }
      if (row.summaryTemplate) return `${server.name}: ${fill(row.summaryTemplate, args, resolved)}`;
      const on = Object.values(resolved);
      if (on.length === 1) return `${server.name}: ${row.name} on ${shown(on[0])}`;
      if (on.length > 1) return `${server.name}: ${row.name} on ${Object.entries(resolved).map(([k, v]) => `${k} ${shown(v)}`).join(", ")}`;
      return `${server.name}: ${row.name} (arguments ${String(resource.properties.argumentsDigest).slice(0, 19)}…)`;
    },
    async ready() {
      await connection(server.id);
    },
    async run(args, ctx) {
      let resolved;
      try {
        resolved = await resolvePaths(args);
      } catch (e) {
        if (e instanceof ToolInputError) throw new ToolError(`${e.message} The call was not forwarded.`);
        throw e;
      }
      // The paths may have been re-pointed (a symbolic link swapped) since policy decided: forward only what was decided.
      const now = idOf(args, resolved);
      if (paths.length && now !== ctx.resource.id) {
        throw new ToolError(`The call's paths now resolve to ${now}, not to ${ctx.resource.id} as decided; refused, the call was not forwarded.`);
      }
      const forwarded = { ...args };
      for (const [k, r] of Object.entries(resolved)) forwarded[k] = Array.isArray(r) ? r.map((x) => x.abs) : r.abs;
      const r = await callUpstream(server.id, row.name, forwarded, ctx.deadline);
      const content = Array.isArray(r.content) ? r.content : [];
      const text = content
        .filter((c): c is { type: "text"; text: string } => (c as { type?: unknown }).type === "text")
        .map((c) => c.text)
        .join("\n");
      return { text, content, structured: r.structuredContent as Record<string, unknown> | undefined, isError: r.isError === true };
    },
  };
}

export { UpstreamUnavailableError };

/** Every upstream tool of every registered server, from the database. */
export async function loadUpstreamTools(): Promise<ToolDef[]> {
  const servers = await db().upstreamServer.findMany({ include: { tools: { orderBy: { name: "asc" } } }, orderBy: { name: "asc" } });
  const out: ToolDef[] = [];
  for (const s of servers) for (const t of s.tools) {
    const def = upstreamToolDef(s, t);
    if (def) out.push(def);
  }
  return out;
}
