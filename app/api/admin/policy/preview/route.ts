import { NextResponse } from "next/server";
import { z } from "zod";
import { ADMIN_ROLES, authorizeRequest } from "@/lib/auth/session";
import { decisionText } from "@/lib/inbox/rule-words";
import { previewRule } from "@/lib/policy/preview";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

const NO_STORE = { "Cache-Control": "no-store" };
const bodySchema = z.object({ draft: z.record(z.string(), z.unknown()), arguments: z.unknown() });

/** Admin policy preview: what the current rules and a draft rule version decide for the given arguments. */
export async function POST(request: Request) {
  const who = await authorizeRequest(request, ADMIN_ROLES);
  if (!who.ok) return NextResponse.json({ error: who.error }, { status: who.status, headers: NO_STORE });
  let json: unknown;
  try {
    json = await request.json();
  } catch {
    return NextResponse.json({ error: "Send a JSON body." }, { status: 400, headers: NO_STORE });
  }
  const body = bodySchema.safeParse(json);
  if (!body.success) return NextResponse.json({ error: "Send { draft, arguments }." }, { status: 400, headers: NO_STORE });
  const result = await previewRule(body.data.draft, body.data.arguments, new Date());
  if (!result.ok) return NextResponse.json({ error: result.error, field: result.field }, { status: 422, headers: NO_STORE });
  return NextResponse.json(
    {
      resource: result.resource,
      draftVersion: result.draftVersion,
      current: { decision: result.current.decision, text: decisionText(result.current) },
      draft: { decision: result.draft.decision, text: decisionText(result.draft) },
    },
    { headers: NO_STORE },
  );
}
