import { NextResponse } from "next/server";
import { z } from "zod";
import { adminJson, adminOnly, jsonAnswer, NO_STORE } from "@/lib/web/admin-json";
import { describeDiff, exportPolicyFile, importPolicyFile, previewPolicyFile } from "@/lib/policy/file";
import { withRequestId } from "@/lib/request-context";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

const bodySchema = z.object({ text: z.string().max(4_000_000), confirm: z.boolean().default(false) }).strict();

/** The current policy as one file (policy text, requirements, test cases), as a download. */
async function handleGET(request: Request) {
  const who = await adminOnly(request);
  if (!who.ok) return who.response;
  return new NextResponse(await exportPolicyFile(), {
    headers: { ...NO_STORE, "content-type": "application/yaml; charset=utf-8", "content-disposition": 'attachment; filename="countersign.policy.yaml"' },
  });
}

/**
 * { text } -> the diff against the current policy, or the file's problems with line and column (nothing saved);
 * { text, confirm: true } -> imported as new versions in one transaction, or refused with its problems and nothing changed.
 */
async function handlePOST(request: Request) {
  const req = await adminJson(request, bodySchema, "{ text, confirm }");
  if (!req.ok) return req.response;
  if (req.body.confirm) {
    const imported = await importPolicyFile(req.body.text, req.user.id, new Date());
    if (!imported.ok) return jsonAnswer({ error: "Not imported: the file has problems. Nothing changed.", problems: imported.problems }, 422);
    return jsonAnswer({ imported: true, unchanged: imported.unchanged, diff: describeDiff(imported.diff), versions: imported.versions, discovery: imported.discovery ?? [] });
  }
  const preview = await previewPolicyFile(req.body.text);
  if (!preview.ok) return jsonAnswer({ error: "The file has problems.", problems: preview.problems }, 422);
  return jsonAnswer({ diff: describeDiff(preview.diff), unchanged: preview.diff.unchanged });
}

// Each line logged while the request is handled carries its id (answered in x-request-id).
export const GET = (request: Request) => withRequestId(request, () => handleGET(request));
export const POST = (request: Request) => withRequestId(request, () => handlePOST(request));
