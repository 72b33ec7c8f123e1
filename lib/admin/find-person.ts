/**
 * Finding a person (or an agent) from what an admin types in a filter: an email, a name, or an audit actor id.
 * Unknown or ambiguous text is an error in words, never "no filter".
 */
import { db } from "../db/client";

export type Found = { ok: true; id: string; name: string; email: string | null; kind: "user" | "agent" } | { ok: false; error: string };

export type PersonQuery = { kind: "email"; email: string } | { kind: "name"; name: string } | { kind: "invalid"; error: string };

const EMAIL = /^[^\s@]+@[^\s@]+$/;

/** What the text asks for, before any lookup: an email (it has an @), else a name. */
export function parsePersonQuery(text: string): PersonQuery {
  const t = text.trim();
  if (!t) return { kind: "invalid", error: "Type a name or an email." };
  if (t.length > 100) return { kind: "invalid", error: "A name or an email is at most 100 characters." };
  if (t.includes("@")) return EMAIL.test(t) ? { kind: "email", email: t.toLowerCase() } : { kind: "invalid", error: `“${t}” is not an email address.` };
  return { kind: "name", name: t };
}

/**
 * The one user (with `agents`, or agent) the text names: an email exactly (any case), or a name exactly (any case),
 * else the one name containing it. Several matches or none is an error that says so.
 */
export async function findPerson(text: string, opts: { agents?: boolean } = {}): Promise<Found> {
  const q = parsePersonQuery(text);
  if (q.kind === "invalid") return { ok: false, error: q.error };
  if (q.kind === "email") {
    const u = await db().user.findFirst({ where: { email: { equals: q.email, mode: "insensitive" } }, select: { id: true, name: true, email: true } });
    return u ? { ok: true, kind: "user", ...u } : { ok: false, error: `No one has the email ${q.email}.` };
  }
  const exact = await db().user.findMany({ where: { name: { equals: q.name, mode: "insensitive" } }, select: { id: true, name: true, email: true }, orderBy: { name: "asc" }, take: 5 });
  const agents = opts.agents ? await db().agent.findMany({ where: { name: { equals: q.name, mode: "insensitive" } }, select: { id: true, name: true }, take: 5 }) : [];
  const users = exact.length ? exact : await db().user.findMany({ where: { name: { contains: q.name, mode: "insensitive" } }, select: { id: true, name: true, email: true }, orderBy: { name: "asc" }, take: 5 });
  const all = [...users.map((u) => ({ ...u, kind: "user" as const })), ...agents.map((a) => ({ ...a, email: null, kind: "agent" as const }))];
  if (all.length === 1) return { ok: true, ...all[0] };
  if (all.length === 0) return { ok: false, error: `No one${opts.agents ? " and no agent" : ""} is called “${q.name}”.` };
  return { ok: false, error: `“${q.name}” matches ${all.map((p) => (p.email ? `${p.name} (${p.email})` : `agent ${p.name}`)).join(", ")}: type the email.` };
}
