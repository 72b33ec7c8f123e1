import { NextResponse } from "next/server";
import { z } from "zod";
import { ADMIN_ROLES, authorizeRequest } from "@/lib/auth/session";
import { previewImpact } from "@/lib/policy/impact";
import { describeFieldErrors, ruleFromFields, type RuleFields } from "@/lib/policy/preview";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

const NO_STORE = { "Cache-Control": "no-store" };
const bodySchema = z.union([
  z.object({ rule: z.record(z.string(), z.unknown()) }).strict(),
  z.object({ document: z.unknown() }).strict(),
]);

/**
 * Admin preview against reality: what a draft form rule ({ rule: fields }) or a draft policy document
 * ({ document }) would have decided for the calls of the last 30 days and every pending request.
 */
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
  if (!body.success) return NextResponse.json({ error: "Send { rule } or { document }." }, { status: 400, headers: NO_STORE });
  let draft;
  if ("rule" in body.data) {
    const fields = ruleFromFields(body.data.rule as RuleFields);
    if (!fields.ok) return NextResponse.json({ error: `The draft rule is not valid: ${describeFieldErrors(fields.fieldErrors)}`, fieldErrors: fields.fieldErrors }, { status: 422, headers: NO_STORE });
    draft = { kind: "rule" as const, rule: fields.rule };
  } else {
    draft = { kind: "document" as const, body: body.data.document };
  }
  const impact = await previewImpact(draft, new Date());
  if (!impact.ok) return NextResponse.json({ error: "The draft does not compile.", problems: impact.problems }, { status: 422, headers: NO_STORE });
  return NextResponse.json(impact, { headers: NO_STORE });
}
