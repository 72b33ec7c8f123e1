import { NextResponse } from "next/server";
import { authorize, REVIEW_ROLES } from "@/lib/auth/session";
import { inboxFor } from "@/lib/inbox/queries";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/** The signed-in reviewer's inbox, polled by the inbox page. */
export async function GET() {
  const who = await authorize(REVIEW_ROLES);
  if (!who.ok) return NextResponse.json({ error: who.error }, { status: who.status, headers: { "Cache-Control": "no-store" } });
  const now = new Date();
  const items = await inboxFor(who.user, now);
  return NextResponse.json({ now: now.toISOString(), items }, { headers: { "Cache-Control": "no-store" } });
}
