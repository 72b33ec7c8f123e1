import { NextResponse } from "next/server";
import { handleSlackCommand } from "@/lib/slack/interactions";
import { withRequestId } from "@/lib/request-context";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/** Slack's slash command request URL: `/countersign link <code>` and `/countersign unlink` (authenticated by Slack's signature). */
async function handlePOST(request: Request) {
  const raw = await request.text();
  const reply = await handleSlackCommand(request.headers, raw, new Date());
  return reply.body ? NextResponse.json(reply.body, { status: reply.status }) : new NextResponse(null, { status: reply.status });
}

export const POST = (request: Request) => withRequestId(request, () => handlePOST(request));
