import { NextResponse } from "next/server";
import { z } from "zod";
import { ADMIN_ROLES, authorizeRequest } from "@/lib/auth/session";
import { draftBody } from "@/lib/policy/console-document";
import { saveDocument } from "@/lib/policy/store";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

const NO_STORE = { "Cache-Control": "no-store" };
const bodySchema = z.object({ policies: z.string().max(2_000_000), settings: z.string().max(2_000_000), note: z.string().max(200).optional() }).strict();

/**
 * Saves the advanced editor's draft as the next policy document version, after strict compilation and its test
 * cases (saveDocument runs both); refused with its problems, nothing saved.
 */
export async function POST(request: Request) {
  const who = await authorizeRequest(request, ADMIN_ROLES);
  if (!who.ok) return NextResponse.json({ error: who.error }, { status: who.status, headers: NO_STORE });
  const body = bodySchema.safeParse(await request.json().catch(() => null));
  if (!body.success) return NextResponse.json({ error: "Send { policies, settings }." }, { status: 400, headers: NO_STORE });
  const draft = draftBody(body.data);
  if (!draft.ok) return NextResponse.json({ error: "Not saved: the draft has problems.", problems: draft.problems }, { status: 422, headers: NO_STORE });
  const saved = await saveDocument(draft.body, who.user.id, new Date(), { note: body.data.note });
  if (!saved.ok) {
    const problems = saved.problems.map((p) => ({ ...p, where: p.line !== undefined || (p.policyId && !p.policyId.startsWith("rule:")) ? "policies" : "settings" }));
    return NextResponse.json({ error: "Not saved: the draft has problems.", problems }, { status: 422, headers: NO_STORE });
  }
  return NextResponse.json({ version: saved.version, unchanged: saved.unchanged }, { headers: NO_STORE });
}
