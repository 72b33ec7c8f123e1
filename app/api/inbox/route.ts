import { NextResponse } from "next/server";
import { authorizeRequest, REVIEW_ROLES } from "@/lib/auth/session";
import { inboxPage } from "@/lib/inbox/inbox";
import { parseInboxParams } from "@/lib/inbox/params";
import { withRequestId } from "@/lib/request-context";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

const NO_STORE = { "Cache-Control": "no-store" };

/** One page of the signed-in reviewer's inbox (same parameters as /inbox), polled by the inbox page. */
async function handleGET(request: Request) {
  const who = await authorizeRequest(request, REVIEW_ROLES);
  if (!who.ok) return NextResponse.json({ error: who.error }, { status: who.status, headers: NO_STORE });
  const params = parseInboxParams(new URL(request.url).searchParams);
  return NextResponse.json(await inboxPage(who.user, params, new Date()), { headers: NO_STORE });
}

// Each line logged while the request is handled carries its id (answered in x-request-id).
export const GET = (request: Request) => withRequestId(request, () => handleGET(request));
