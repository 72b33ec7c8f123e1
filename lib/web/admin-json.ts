/**
 * The shared front of the admin console's JSON routes: a signed-in admin (same-site for writes), a JSON body that
 * fits the route's schema, and answers that are never cached. A refusal comes back as the response to return.
 */
import { NextResponse } from "next/server";
import type { z } from "zod";
import { ADMIN_ROLES, authorizeRequest, type SessionUser } from "../auth/session";

export const NO_STORE = { "Cache-Control": "no-store" };

type Admin = SessionUser;

/** A JSON answer that is never cached. */
export function jsonAnswer(body: unknown, status = 200): NextResponse {
  return NextResponse.json(body, { status, headers: NO_STORE });
}

/** The admin who sent `request`, or the response refusing them. */
export async function adminOnly(request: Request): Promise<{ ok: true; user: Admin } | { ok: false; response: NextResponse }> {
  const who = await authorizeRequest(request, ADMIN_ROLES);
  if (!who.ok) return { ok: false, response: jsonAnswer({ error: who.error }, who.status) };
  return { ok: true, user: who.user };
}

/** The admin and the request's JSON body parsed by `schema`; `expected` says what to send when it does not fit. */
export async function adminJson<T>(
  request: Request,
  schema: z.ZodType<T>,
  expected: string,
): Promise<{ ok: true; user: Admin; body: T } | { ok: false; response: NextResponse }> {
  const who = await adminOnly(request);
  if (!who.ok) return who;
  const json = await request.json().catch(() => undefined);
  if (json === undefined) return { ok: false, response: jsonAnswer({ error: `Send a JSON body: ${expected}.` }, 400) };
  const body = schema.safeParse(json);
  if (!body.success) return { ok: false, response: jsonAnswer({ error: `Send ${expected}.` }, 400) };
  return { ok: true, user: who.user, body: body.data };
}
