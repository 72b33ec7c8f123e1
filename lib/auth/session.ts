/**
 * Who is signed in, checked against the database on every use. Every page, server action and route handler of the
 * reviewer side calls one of these helpers itself; nothing relies on middleware.
 *
 * The JWT only names the user. Role, groups and the active flag are read fresh from the User row, so a reviewer
 * who is deactivated or moved out of a group loses access at once, not when their token expires; so is the session
 * epoch, so a session ended by signing out everywhere or by an admin is refused at its next request. A session over
 * its idle or absolute limit (lib/auth/session-lifetime.ts) is refused before the database is asked.
 */
import { headers } from "next/headers";
import { redirect } from "next/navigation";
import { cache } from "react";
import { z } from "zod";
import { db } from "@/lib/db/client";
import { auth } from "./auth";
import { loginPathFor } from "./return-path";
import { sessionLifetime, sessionLimits } from "./session-lifetime";
import { sessionEnded, sessionStillValid } from "./sessions";

/** The path of the page being rendered, set by proxy.ts for pages (so a sign-in can return to it). */
export const PAGE_PATH_HEADER = "x-countersign-page";

export type Role = "admin" | "reviewer" | "requester";

export type SessionUser = {
  id: string;
  name: string;
  email: string;
  role: Role;
  groups: string[];
};

/** Roles that may decide approval requests (group membership and four-eyes are checked by `decide`). */
export const REVIEW_ROLES: readonly Role[] = ["reviewer"];

/** Roles that may read approval requests: reviewers (their groups' requests) and admins (all, read-only). */
export const VIEW_ROLES: readonly Role[] = ["reviewer", "admin"];

const sessionUserSchema = z.object({
  id: z.string().min(1),
  epoch: z.number().int().optional(),
  sid: z.string().min(1).max(100).optional(),
  signedInAt: z.number().optional(),
  seenAt: z.number().optional(),
});

/** The signed-in, active user, or null. Memoized per server request (layout and page ask once between them). */
export const currentUser = cache(async function currentUser(): Promise<SessionUser | null> {
  const session = await auth();
  const parsed = sessionUserSchema.safeParse(session?.user);
  if (!parsed.success) return null;
  // Past the absolute limit since the sign-in, or idle for longer than the idle limit: the person signs in again.
  if (!sessionLifetime(parsed.data, new Date(), sessionLimits()).ok) return null;
  const [user, ended] = await Promise.all([
    db().user.findUnique({
      where: { id: parsed.data.id },
      select: { id: true, name: true, email: true, role: true, groups: true, active: true, sessionEpoch: true },
    }),
    sessionEnded(parsed.data.sid),
  ]);
  if (!user || !user.active) return null;
  // This very session was signed out (its cookie may have come back with a request that was in flight).
  if (ended) return null;
  // Signed out everywhere, or an admin ended this user's sessions, since this session was signed in.
  if (!sessionStillValid(parsed.data.epoch, user.sessionEpoch)) return null;
  return { id: user.id, name: user.name, email: user.email, role: user.role as Role, groups: user.groups };
});

export function hasRole(user: SessionUser, roles: readonly Role[]): boolean {
  return roles.includes(user.role);
}

/** For pages: the signed-in user, or a redirect to the sign-in page, which returns to this page afterwards. */
export async function requireUser(): Promise<SessionUser> {
  const user = await currentUser();
  if (!user) redirect(loginPathFor((await headers()).get(PAGE_PATH_HEADER)));
  return user;
}

export type Authorization =
  | { ok: true; user: SessionUser }
  | { ok: false; status: 401 | 403; error: string };

/**
 * For route handlers and server actions: the signed-in user if their role is one of `roles`, otherwise why not
 * (401 not signed in, 403 wrong role). Never redirects, so the caller maps the refusal to its own response.
 */
export async function authorize(roles: readonly Role[]): Promise<Authorization> {
  const user = await currentUser();
  if (!user) return { ok: false, status: 401, error: "You are not signed in." };
  if (!hasRole(user, roles)) return { ok: false, status: 403, error: "Your account may not do this." };
  return { ok: true, user };
}

/** For pages: the signed-in user with one of `roles`; others are sent to sign in, or get null for a 403 view. */
export async function requireRole(...roles: Role[]): Promise<SessionUser | null> {
  const user = await requireUser();
  return hasRole(user, roles) ? user : null;
}

// ---- cross-site request refusal -------------------------------------------------------------------------------

export type Refusal = { ok: false; status: 401 | 403; error: string };

const CROSS_SITE = "Cross-site requests are refused: send this from a Countersign page.";

/** Hosts (host[:port]) that may send state-changing requests besides the request's own Host: COUNTERSIGN_ALLOWED_ORIGINS. */
function extraAllowedHosts(): string[] {
  return (process.env.COUNTERSIGN_ALLOWED_ORIGINS ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => {
      try {
        return new URL(s.includes("://") ? s : `http://${s}`).host.toLowerCase();
      } catch {
        return "";
      }
    })
    .filter(Boolean);
}

function originHost(origin: string): string | null {
  if (origin === "null") return null;
  try {
    return new URL(origin).host.toLowerCase();
  } catch {
    return null;
  }
}

/**
 * Whether a request comes from one of our own pages. `strict` (anything that changes state, and server actions):
 * the Origin header must be present and name this host. Otherwise (GETs returning private data): a request
 * without Origin passes (browsers omit it on same-origin GETs and navigations), but a foreign Origin, or a
 * browser's `Sec-Fetch-Site: cross-site`, is refused. Returns null when the request may proceed.
 *
 * Next.js checks Origin against Host before running a server action, but lets a request without Origin through;
 * this check refuses that case too, and covers JSON route handlers, which Next does not check at all.
 */
export function crossSiteRefusal(h: Headers, strict: boolean): Refusal | null {
  const site = h.get("sec-fetch-site");
  if (site === "cross-site") return { ok: false, status: 403, error: CROSS_SITE };
  const origin = h.get("origin");
  const host = (h.get("x-forwarded-host") ?? h.get("host") ?? "").split(",")[0].trim().toLowerCase();
  if (!origin) return strict ? { ok: false, status: 403, error: CROSS_SITE } : null;
  const from = originHost(origin);
  if (!from || !host) return { ok: false, status: 403, error: CROSS_SITE };
  if (from === host || extraAllowedHosts().includes(from)) return null;
  return { ok: false, status: 403, error: CROSS_SITE };
}

/**
 * For server actions: refuses cross-site calls (strict Origin check), then `authorize(roles)`. Every server action
 * of the reviewer and admin side starts with this.
 */
export async function authorizeAction(roles: readonly Role[]): Promise<Authorization> {
  const refused = crossSiteRefusal(await headers(), true);
  if (refused) return refused;
  return authorize(roles);
}

/**
 * For route handlers: refuses cross-site requests (strict for anything but GET/HEAD), then `authorize(roles)`.
 */
export async function authorizeRequest(request: Request, roles: readonly Role[]): Promise<Authorization> {
  const method = request.method.toUpperCase();
  const refused = crossSiteRefusal(request.headers, method !== "GET" && method !== "HEAD");
  if (refused) return refused;
  return authorize(roles);
}

/** Roles of the admin console. */
export const ADMIN_ROLES: readonly Role[] = ["admin"];
