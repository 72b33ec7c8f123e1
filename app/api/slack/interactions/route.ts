import { NextResponse } from "next/server";
import { handleSlackInteraction } from "@/lib/slack/interactions";
import { withRequestId } from "@/lib/request-context";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/** Slack's interactivity request URL: a button pressed in a request's message (authenticated by Slack's signature). */
async function handlePOST(request: Request) {
  const raw = await request.text();
  const reply = await handleSlackInteraction(request.headers, raw, new Date());
  return reply.body ? NextResponse.json(reply.body, { status: reply.status }) : new NextResponse(null, { status: reply.status });
}

export const POST = (request: Request) => withRequestId(request, () => handlePOST(request));
