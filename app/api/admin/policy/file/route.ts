import { NextResponse } from "next/server";
import { z } from "zod";
import { ADMIN_ROLES, authorizeRequest } from "@/lib/auth/session";
import { checkPolicyFile, describeDiff, diffPolicy, exportPolicyFile, importPolicyFile, parsePolicyFile, storedRule } from "@/lib/policy/file";
import { currentDocument, currentRules } from "@/lib/policy/store";
import { policyTools, syncCatalog } from "@/lib/tools/catalog";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

const NO_STORE = { "Cache-Control": "no-store" };
const bodySchema = z.object({ text: z.string().max(4_000_000), confirm: z.boolean().default(false) }).strict();

/** The current policy as one file (policy text, requirements, test cases), as a download. */
export async function GET(request: Request) {
  const who = await authorizeRequest(request, ADMIN_ROLES);
  if (!who.ok) return NextResponse.json({ error: who.error }, { status: who.status, headers: NO_STORE });
  return new NextResponse(await exportPolicyFile(), {
    headers: { ...NO_STORE, "content-type": "application/yaml; charset=utf-8", "content-disposition": 'attachment; filename="countersign.policy.yaml"' },
  });
}

/**
 * { text } -> the diff against the current policy, or the file's problems with line and column (nothing saved);
 * { text, confirm: true } -> imported as new versions in one transaction, or refused with its problems and nothing changed.
 */
export async function POST(request: Request) {
  const who = await authorizeRequest(request, ADMIN_ROLES);
  if (!who.ok) return NextResponse.json({ error: who.error }, { status: who.status, headers: NO_STORE });
  const body = bodySchema.safeParse(await request.json().catch(() => null));
  if (!body.success) return NextResponse.json({ error: "Send { text, confirm }." }, { status: 400, headers: NO_STORE });
  if (body.data.confirm) {
    const imported = await importPolicyFile(body.data.text, who.user.id, new Date());
    if (!imported.ok) return NextResponse.json({ error: "Not imported: the file has problems. Nothing changed.", problems: imported.problems }, { status: 422, headers: NO_STORE });
    return NextResponse.json({ imported: true, unchanged: imported.unchanged, diff: describeDiff(imported.diff), versions: imported.versions }, { headers: NO_STORE });
  }
  const parsed = parsePolicyFile(body.data.text);
  if (!parsed.ok) return NextResponse.json({ error: "The file has problems.", problems: parsed.problems }, { status: 422, headers: NO_STORE });
  await syncCatalog();
  const checked = await checkPolicyFile(parsed.file, policyTools(), { mapResource: true });
  if (!checked.ok) return NextResponse.json({ error: "The file has problems.", problems: checked.problems }, { status: 422, headers: NO_STORE });
  const [rules, document] = await Promise.all([currentRules(), currentDocument()]);
  const diff = diffPolicy({ rules: rules.map(storedRule), document: document.body }, { rules: parsed.file.rules, document: parsed.file.document });
  return NextResponse.json({ diff: describeDiff(diff), unchanged: diff.unchanged }, { headers: NO_STORE });
}
