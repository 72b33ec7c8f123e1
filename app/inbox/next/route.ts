import { NextResponse } from "next/server";
import { z } from "zod";
import { authorizeRequest, REVIEW_ROLES } from "@/lib/auth/session";
import { loginPathFor } from "@/lib/auth/return-path";
import { adjacentRequest } from "@/lib/inbox/queue";
import { withRequestId } from "@/lib/request-context";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/**
 * "Next request": from the request `from`, to the next (or, with dir=previous, the previous) one in the signed-in
 * reviewer's inbox that they may decide now, chosen when the link is followed; to the inbox when nothing waits.
 */
async function handleGET(request: Request) {
  const url = new URL(request.url);
  const who = await authorizeRequest(request, REVIEW_ROLES);
  if (!who.ok) return seeOther(loginPathFor(`${url.pathname}${url.search}`));
  const from = z.uuid().safeParse(url.searchParams.get("from"));
  const direction = url.searchParams.get("dir") === "previous" ? "previous" : "next";
  const id = from.success ? await adjacentRequest(who.user, from.data, direction, new Date()) : null;
  return seeOther(id ? `/requests/${id}` : "/inbox");
}

/** A redirect to a path on the host the browser asked (a relative Location: behind a proxy the server's own URL differs). */
function seeOther(path: string): NextResponse {
  return new NextResponse(null, { status: 303, headers: { Location: path, "Cache-Control": "no-store" } });
}

export const GET = (request: Request) => withRequestId(request, () => handleGET(request));
