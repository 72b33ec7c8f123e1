import { z } from "zod";
import { adminJson, jsonAnswer } from "@/lib/web/admin-json";
import { draftBody, placeProblems } from "@/lib/policy/console-document";
import { saveDocument } from "@/lib/policy/store";
import { withRequestId } from "@/lib/request-context";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

const bodySchema = z.object({ policies: z.string().max(2_000_000), settings: z.string().max(2_000_000), note: z.string().max(200).optional() }).strict();

/**
 * Saves the advanced editor's draft as the next policy document version, after strict compilation and its test
 * cases (saveDocument runs both); refused with its problems, nothing saved.
 */
async function handlePOST(request: Request) {
  const req = await adminJson(request, bodySchema, "{ policies, settings }");
  if (!req.ok) return req.response;
  const draft = draftBody(req.body);
  if (!draft.ok) return jsonAnswer({ error: "Not saved: the draft has problems.", problems: draft.problems }, 422);
  const saved = await saveDocument(draft.body, req.user.id, new Date(), { note: req.body.note });
  if (!saved.ok) return jsonAnswer({ error: "Not saved: the draft has problems.", problems: placeProblems(saved.problems) }, 422);
  return jsonAnswer({ version: saved.version, unchanged: saved.unchanged });
}

// Each line logged while the request is handled carries its id (answered in x-request-id).
export const POST = (request: Request) => withRequestId(request, () => handlePOST(request));
