import { z } from "zod";
import { adminJson, jsonAnswer } from "@/lib/web/admin-json";
import { previewImpact } from "@/lib/policy/impact";
import { describeFieldErrors, ruleFromFields, type RuleFields } from "@/lib/policy/preview";
import { withRequestId } from "@/lib/request-context";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

const bodySchema = z.union([
  z.object({ rule: z.record(z.string(), z.unknown()) }).strict(),
  z.object({ document: z.unknown() }).strict(),
]);

/**
 * Admin preview against reality: what a draft form rule ({ rule: fields }) or a draft policy document
 * ({ document }) would have decided for the calls of the last 30 days and every pending request.
 */
async function handlePOST(request: Request) {
  const req = await adminJson(request, bodySchema, "{ rule } or { document }");
  if (!req.ok) return req.response;
  let draft;
  if ("rule" in req.body) {
    const fields = ruleFromFields(req.body.rule as RuleFields);
    if (!fields.ok) return jsonAnswer({ error: `The draft rule is not valid: ${describeFieldErrors(fields.fieldErrors)}`, fieldErrors: fields.fieldErrors }, 422);
    draft = { kind: "rule" as const, rule: fields.rule };
  } else {
    draft = { kind: "document" as const, body: req.body.document };
  }
  const impact = await previewImpact(draft, new Date());
  if (!impact.ok) return jsonAnswer({ error: "The draft does not compile.", problems: impact.problems }, 422);
  return jsonAnswer(impact);
}

// Each line logged while the request is handled carries its id (answered in x-request-id).
export const POST = (request: Request) => withRequestId(request, () => handlePOST(request));
