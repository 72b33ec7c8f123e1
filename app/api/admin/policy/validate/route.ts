import { NextResponse } from "next/server";
import { z } from "zod";
import { ADMIN_ROLES, authorizeRequest } from "@/lib/auth/session";
import { validateDraft } from "@/lib/policy/console-document";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

const NO_STORE = { "Cache-Control": "no-store" };
const bodySchema = z.object({ policies: z.string().max(2_000_000), settings: z.string().max(2_000_000) }).strict();

/** The advanced editor's check on every keystroke: strict compilation of the draft, problems with line and column. */
export async function POST(request: Request) {
  const who = await authorizeRequest(request, ADMIN_ROLES);
  if (!who.ok) return NextResponse.json({ error: who.error }, { status: who.status, headers: NO_STORE });
  const body = bodySchema.safeParse(await request.json().catch(() => null));
  if (!body.success) return NextResponse.json({ error: "Send { policies, settings }." }, { status: 400, headers: NO_STORE });
  const { body: document, problems } = await validateDraft(body.data);
  return NextResponse.json({ ok: problems.length === 0, problems, document }, { headers: NO_STORE });
}
