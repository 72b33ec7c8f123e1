/**
 * Registering, updating and removing upstream MCP servers. Credentials (a bearer token or one header) and a
 * stdio server's environment values are sealed with the data keys (lib/crypto) and never returned: reads give
 * only whether they are set and the names of the environment variables. Every change is audited, without values.
 */
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { appendAudit, type Tx } from "../audit/append";
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
  pathArgs: z
    .array(
      z
        .string()
        .regex(/^[A-Za-z0-9_]{1,64}$/)
        // Each path argument also gives policy `<name>_within` and the resource has server, tool and argumentsDigest.
        .refine((a) => !a.endsWith("_within") && !["server", "tool", "argumentsDigest"].includes(a), "a name policy's resource already uses"),
    )
    .max(16)
    .default([]),
  root: z.string().min(1).max(1000).refine((p) => p.startsWith("/"), "an absolute folder path").optional(),
};

/** Whether a URL is http or https. Text that is no URL at all passes here: `.url()` refuses it in its own words. */
function isWebUrl(url: string): boolean {
  try {
    return /^https?:$/.test(new URL(url).protocol);
  } catch {
    return true;
  }
}

/** A user name or password in a URL, however it is spelt (`https:bot:pw@host` is `https://bot:pw@host` to a URL parser). */
export function hasUserinfo(url: string): boolean {
  try {
    const u = new URL(url);
    return u.username !== "" || u.password !== "";
  } catch {
    return false; // not a URL: refused as such by `.url()`
  }
}

export const UpstreamInput = z.discriminatedUnion("transport", [
  z
    .object({
      ...Common,
      transport: z.literal("streamable-http"),
      url: z
        .string()
        .url()
        .refine(isWebUrl, "an http:// or https:// URL")
        // A secret in the URL would be stored and shown as it is: credentials have their own, sealed field.
        .refine((u) => !hasUserinfo(u), "a URL without a user name or password: give credentials in their own field"),
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
 * A secret value may be a reference to an environment variable of Countersign's process, `${env:NAME}`: what is
 * stored (sealed) is then the reference, resolved each time the gateway connects. `${stored}` (in the policy
 * file) stands for the value already stored, which is kept.
 */
export const ENV_REFERENCE = /^\$\{env:([A-Za-z_][A-Za-z0-9_]{0,127})\}$/;
export const STORED_VALUE = "${stored}";

export class UpstreamSecretError extends Error {}

/** A stored secret value with its reference resolved from the environment. Throws, naming the variable only. */
export function resolveSecret(value: string, env: NodeJS.ProcessEnv = process.env): string {
  const m = ENV_REFERENCE.exec(value);
  if (!m) return value;
  const v = env[m[1]];
  if (v === undefined || v === "") throw new UpstreamSecretError(`The environment variable ${m[1]} the server's settings refer to is not set.`);
  return v;
}

/**
 * Registers a server, or updates the one of that name (`credentials`/`env` left out keep the stored values; an
 * update that changes the transport replaces them). Returns the view; throws UpstreamInputError on bad input.
 */
export async function saveUpstream(input: unknown, actor: string, now: Date): Promise<UpstreamView> {
  return db().$transaction((tx) => saveUpstreamIn(tx, input, actor, now));
}

/** The stored secrets of a server (for the policy file's export: to tell references from values; never shown). */
export function storedSecrets(row: Row): { credentials: UpstreamCredentials | null; env: Record<string, string> } {
  return {
    credentials: row.credentials ? (open(row.credentials, credentialsAad(row.id)) as UpstreamCredentials) : null,
    env: row.env ? (open(row.env, envAad(row.id)) as Record<string, string>) : {},
  };
}

/** saveUpstream inside a transaction the caller holds (the policy file's import). `${stored}` keeps a stored value. */
export async function saveUpstreamIn(tx: Tx, input: unknown, actor: string, now: Date): Promise<UpstreamView> {
  const parsed = UpstreamInput.safeParse(input);
  if (!parsed.success) throw new UpstreamInputError(`Invalid upstream server: ${problems(parsed.error)}.`);
  const v = parsed.data;
  {
    const existing = await tx.upstreamServer.findUnique({ where: { name: v.name } });
    const id = existing?.id ?? `up_${randomUUID()}`;
    const keep = existing && existing.transport === v.transport;
    const stored = existing && keep ? storedSecrets(existing) : { credentials: null, env: {} as Record<string, string> };
    if (v.transport === "streamable-http" && v.credentials) {
      const c = v.credentials;
      const value = "bearer" in c ? c.bearer : c.value;
      if (value === STORED_VALUE) {
        const s = stored.credentials;
        const same = s && ("bearer" in c ? "bearer" in s : "header" in s && s.header === c.header);
        if (!same) throw new UpstreamInputError(`Invalid upstream server: credentials: ${v.name} has no stored ${"bearer" in c ? "bearer token" : `${c.header} header`} to keep.`);
        v.credentials = s;
      }
    }
    if (v.transport === "stdio") {
      for (const [k, value] of Object.entries(v.env)) {
        if (value !== STORED_VALUE) continue;
        if (!(k in stored.env)) throw new UpstreamInputError(`Invalid upstream server: env.${k}: ${v.name} has no stored value of ${k} to keep.`);
        v.env[k] = stored.env[k];
      }
    }
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
  }
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
    if ("bearer" in c) headers.Authorization = `Bearer ${resolveSecret(c.bearer)}`;
    else headers[c.header] = resolveSecret(c.value);
  }
  const env = row.env ? (open(row.env, envAad(row.id)) as Record<string, string>) : {};
  return {
    id: row.id,
    name: row.name,
    transport: row.transport as UpstreamConnection["transport"],
    url: row.url,
    headers,
    command: row.command,
    args: row.args as string[],
    env: Object.fromEntries(Object.entries(env).map(([k, v]) => [k, resolveSecret(v)])),
  };
}

/**
 * The connection settings of a server that is not registered yet (one a policy file registers), its secrets'
 * `${env:NAME}` references resolved from the environment: for listing its tools before it is registered.
 * Throws UpstreamInputError for settings the console would refuse, UpstreamSecretError for a secret not at hand.
 */
export function connectionOfInput(input: unknown, env: NodeJS.ProcessEnv = process.env): UpstreamConnection {
  const parsed = UpstreamInput.safeParse(input);
  if (!parsed.success) throw new UpstreamInputError(problems(parsed.error));
  const v = parsed.data;
  const secret = (value: string) => {
    if (value === STORED_VALUE) throw new UpstreamSecretError(`${v.name}: ${STORED_VALUE} refers to a value stored for a registered server; this one is not registered yet.`);
    return resolveSecret(value, env);
  };
  const headers: Record<string, string> = {};
  if (v.transport === "streamable-http" && v.credentials) {
    const c = v.credentials;
    if ("bearer" in c) headers.Authorization = `Bearer ${secret(c.bearer)}`;
    else headers[c.header] = secret(c.value);
  }
  return {
    id: `unregistered:${v.name}`,
    name: v.name,
    transport: v.transport,
    url: v.transport === "streamable-http" ? v.url : null,
    headers,
    command: v.transport === "stdio" ? v.command : null,
    args: v.transport === "stdio" ? v.args : [],
    env: v.transport === "stdio" ? Object.fromEntries(Object.entries(v.env).map(([k, val]) => [k, secret(val)])) : {},
  };
}

/** Every upstream tool's stored snapshots (accepted, and the changed one awaiting review), for the console. */
export async function upstreamToolRows() {
  return db().upstreamTool.findMany({ orderBy: { name: "asc" } });
}
