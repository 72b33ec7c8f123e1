/**
 * Registering, updating and removing upstream MCP servers. Credentials (a bearer token or one header) and a
 * stdio server's environment values are sealed with the data keys (lib/crypto) and never returned: reads give
 * only whether they are set and the names of the environment variables. Every change is audited, without values.
 */
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { appendAudit } from "../audit/append";
import { open, seal } from "../crypto/seal";
import { db } from "../db/client";
import { SERVER_NAME } from "./names";

const HEADER_NAME = /^[A-Za-z0-9-]{1,64}$/;
const FORBIDDEN_HEADERS = new Set(["host", "content-length", "content-type", "accept", "mcp-session-id", "mcp-protocol-version", "connection"]);

const Credentials = z.union([
  z.object({ bearer: z.string().min(1).max(4096) }).strict(),
  z
    .object({ header: z.string().regex(HEADER_NAME, "a header name: letters, digits and dashes"), value: z.string().min(1).max(4096) })
    .strict()
    .refine((c) => !FORBIDDEN_HEADERS.has(c.header.toLowerCase()), "this header is set by the transport itself"),
]);
export type UpstreamCredentials = z.infer<typeof Credentials>;

const Common = {
  name: z.string().regex(SERVER_NAME, "a name of lower-case letters, digits and dashes (at most 32), used as the tools' namespace"),
  enabled: z.boolean().default(true),
  /** Arguments that name paths under `root` (for a filesystem server): policy then judges the resolved path. */
  pathArgs: z.array(z.string().regex(/^[A-Za-z0-9_]{1,64}$/)).max(16).default([]),
  root: z.string().min(1).max(1000).refine((p) => p.startsWith("/"), "an absolute folder path").optional(),
};

export const UpstreamInput = z.discriminatedUnion("transport", [
  z
    .object({
      ...Common,
      transport: z.literal("streamable-http"),
      url: z
        .string()
        .url()
        .refine((u) => /^https?:$/.test(new URL(u).protocol), "an http:// or https:// URL"),
      credentials: Credentials.optional(),
    })
    .strict(),
  z
    .object({
      ...Common,
      transport: z.literal("stdio"),
      command: z.string().min(1).max(1000),
      args: z.array(z.string().max(4000)).max(100).default([]),
      env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, "an environment variable name"), z.string().max(8192)).default({}),
    })
    .strict(),
]).superRefine((v, ctx) => {
  if (v.pathArgs.length > 0 && !v.root) ctx.addIssue({ code: "custom", path: ["root"], message: "path arguments need the folder they resolve under" });
});
export type UpstreamInput = z.input<typeof UpstreamInput>;

export class UpstreamInputError extends Error {}

function problems(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join(".") || "server"}: ${i.message}`).join("; ");
}

const credentialsAad = (id: string) => `UpstreamServer.credentials:${id}`;
const envAad = (id: string) => `UpstreamServer.env:${id}`;

/** What an admin and the console may see of a server: never a credential's or an environment variable's value. */
export type UpstreamView = {
  id: string;
  name: string;
  transport: "streamable-http" | "stdio";
  url: string | null;
  command: string | null;
  args: string[];
  envNames: string[];
  hasCredentials: boolean;
  pathArgs: string[];
  root: string | null;
  enabled: boolean;
  health: string;
  healthNote: string | null;
};

type Row = Awaited<ReturnType<ReturnType<typeof db>["upstreamServer"]["findFirstOrThrow"]>>;

export function viewOf(row: Row): UpstreamView {
  return {
    id: row.id,
    name: row.name,
    transport: row.transport as UpstreamView["transport"],
    url: row.url,
    command: row.command,
    args: row.args as string[],
    envNames: row.envNames as string[],
    hasCredentials: row.credentials !== null,
    pathArgs: row.pathArgs as string[],
    root: row.root,
    enabled: row.enabled,
    health: row.health,
    healthNote: row.healthNote,
  };
}

/**
 * Registers a server, or updates the one of that name (`credentials`/`env` left out keep the stored values; an
 * update that changes the transport replaces them). Returns the view; throws UpstreamInputError on bad input.
 */
export async function saveUpstream(input: unknown, actor: string, now: Date): Promise<UpstreamView> {
  const parsed = UpstreamInput.safeParse(input);
  if (!parsed.success) throw new UpstreamInputError(`Invalid upstream server: ${problems(parsed.error)}.`);
  const v = parsed.data;
  return db().$transaction(async (tx) => {
    const existing = await tx.upstreamServer.findUnique({ where: { name: v.name } });
    const id = existing?.id ?? `up_${randomUUID()}`;
    const keep = existing && existing.transport === v.transport;
    const data =
      v.transport === "streamable-http"
        ? {
            transport: v.transport,
            url: v.url,
            command: null,
            args: [],
            env: null,
            envNames: [],
            credentials: v.credentials ? seal(v.credentials, credentialsAad(id)) : keep ? existing.credentials : null,
          }
        : {
            transport: v.transport,
            url: null,
            command: v.command,
            args: v.args,
            credentials: null,
            env: Object.keys(v.env).length ? seal(v.env, envAad(id)) : null,
            envNames: Object.keys(v.env).sort(),
          };
    const common = { enabled: v.enabled, pathArgs: v.pathArgs, root: v.root ?? null, updatedAt: now };
    const row = existing
      ? await tx.upstreamServer.update({ where: { id }, data: { ...data, ...common } })
      : await tx.upstreamServer.create({ data: { id, name: v.name, ...data, ...common, createdAt: now } });
    await appendAudit(tx, {
      type: existing ? "upstream.updated" : "upstream.registered",
      actor,
      data: { server: v.name, transport: v.transport, enabled: v.enabled, credentials: row.credentials !== null, env: row.envNames },
      at: now,
    });
    return viewOf(row);
  });
}

export async function removeUpstream(name: string, actor: string, now: Date): Promise<boolean> {
  return db().$transaction(async (tx) => {
    const n = await tx.upstreamServer.deleteMany({ where: { name } });
    if (n.count === 1) await appendAudit(tx, { type: "upstream.removed", actor, data: { server: name }, at: now });
    return n.count === 1;
  });
}

export async function listUpstreams(): Promise<UpstreamView[]> {
  return (await db().upstreamServer.findMany({ orderBy: { name: "asc" } })).map(viewOf);
}

/** The connection settings of a server, secrets opened: for the gateway client only, never for display or logs. */
export type UpstreamConnection = {
  id: string;
  name: string;
  transport: "streamable-http" | "stdio";
  url: string | null;
  headers: Record<string, string>;
  command: string | null;
  args: string[];
  env: Record<string, string>;
};

export async function connectionOf(id: string): Promise<UpstreamConnection | null> {
  const row = await db().upstreamServer.findUnique({ where: { id } });
  if (!row || !row.enabled) return null;
  const headers: Record<string, string> = {};
  if (row.credentials) {
    const c = open(row.credentials, credentialsAad(row.id)) as UpstreamCredentials;
    if ("bearer" in c) headers.Authorization = `Bearer ${c.bearer}`;
    else headers[c.header] = c.value;
  }
  return {
    id: row.id,
    name: row.name,
    transport: row.transport as UpstreamConnection["transport"],
    url: row.url,
    headers,
    command: row.command,
    args: row.args as string[],
    env: row.env ? (open(row.env, envAad(row.id)) as Record<string, string>) : {},
  };
}

/** Every upstream tool's stored snapshots (accepted, and the changed one awaiting review), for the console. */
export async function upstreamToolRows() {
  return db().upstreamTool.findMany({ orderBy: { name: "asc" } });
}
