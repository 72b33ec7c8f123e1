import { z } from "zod";
import { adminJson, jsonAnswer } from "@/lib/web/admin-json";
import { decisionText } from "@/lib/inbox/rule-words";
import { previewRule } from "@/lib/policy/preview";
import { withRequestId } from "@/lib/request-context";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

const bodySchema = z.object({ draft: z.record(z.string(), z.unknown()), arguments: z.unknown() });

/** Admin policy preview: what the current rules and a draft rule version decide for the given arguments. */
async function handlePOST(request: Request) {
  const req = await adminJson(request, bodySchema, "{ draft, arguments }");
  if (!req.ok) return req.response;
  const result = await previewRule(req.body.draft, req.body.arguments, new Date());
  if (!result.ok) return jsonAnswer({ error: result.error, field: result.field }, 422);
  return jsonAnswer({
    resource: result.resource,
    draftVersion: result.draftVersion,
    current: { decision: result.current.decision, text: decisionText(result.current) },
    draft: { decision: result.draft.decision, text: decisionText(result.draft) },
  });
}

// Each line logged while the request is handled carries its id (answered in x-request-id).
export const POST = (request: Request) => withRequestId(request, () => handlePOST(request));
