import { z } from "zod";
import { adminJson, jsonAnswer } from "@/lib/web/admin-json";
import { validateDraft } from "@/lib/policy/console-document";
import { withRequestId } from "@/lib/request-context";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

const bodySchema = z.object({ policies: z.string().max(2_000_000), settings: z.string().max(2_000_000) }).strict();

/** The advanced editor's check on every keystroke: strict compilation of the draft, problems with line and column. */
async function handlePOST(request: Request) {
  const req = await adminJson(request, bodySchema, "{ policies, settings }");
  if (!req.ok) return req.response;
  const { body: document, problems } = await validateDraft(req.body);
  return jsonAnswer({ ok: problems.length === 0, problems, document });
}

// Each line logged while the request is handled carries its id (answered in x-request-id).
export const POST = (request: Request) => withRequestId(request, () => handlePOST(request));
