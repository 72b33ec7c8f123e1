/**
 * Conformance mode's data: one policy rule per task fixture (requestable, decided by the "conformance-resolver"
 * approver group) and the automatic resolver's reviewer account. Idempotent; written once per process, on the
 * first MCP request in conformance mode. Never runs otherwise.
 */
import { randomBytes } from "node:crypto";
import bcrypt from "bcryptjs";
import { db, Prisma } from "../../db/client";
import { CONFORMANCE_FIXTURE_TOOLS } from "../../tools/conformance-fixtures";
import { currentDocument, saveDocument } from "../../policy/store";

export const RESOLVER_GROUP = "conformance-resolver";
export const RESOLVER_EMAIL = "conformance-resolver@countersign.test";

let done: Promise<void> | null = null;

export function ensureConformanceData(): Promise<void> {
  done ??= seed().catch((e) => {
    done = null;
    throw e;
  });
  return done;
}

/** Two servers (or two first requests) may seed at once: a unique-key collision means the other one did it. */
async function once(write: () => Promise<unknown>): Promise<void> {
  try {
    await write();
  } catch (e) {
    if (!(e instanceof Prisma.PrismaClientKnownRequestError && e.code === "P2002")) throw e;
  }
}

async function seed(): Promise<void> {
  // An account nobody can sign in to: the password is random and thrown away.
  const passwordHash = await bcrypt.hash(randomBytes(24).toString("base64url"), 10);
  await once(() =>
    db().user.upsert({
      where: { email: RESOLVER_EMAIL },
      update: {},
      create: { email: RESOLVER_EMAIL, name: "Conformance Resolver", role: "reviewer", groups: [RESOLVER_GROUP], passwordHash },
    }),
  );
  for (const tool of CONFORMANCE_FIXTURE_TOOLS) {
    const ruleKey = `conformance-${tool.name.replace(/_/g, "-")}`;
    const exists = await db().policyRule.findFirst({ where: { ruleKey } });
    if (exists) continue;
    await once(() => db().policyRule.create({
      data: {
        ruleKey,
        version: 1,
        tool: tool.name,
        description: `Conformance fixture ${tool.name}: decided by the automatic resolver`,
        field: "fixture",
        operator: "eq",
        value: "conformance",
        effect: "requestable",
        approverGroup: RESOLVER_GROUP,
        approvalsRequired: 1,
        requestDeadlineSec: 3600,
        approvalValiditySec: 600,
        reason: "This conformance fixture runs as an approval task that an automatic resolver decides.",
        createdBy: "conformance",
      },
    }));
  }
  // The fixtures are permitted by posture (the demo policy permits only the demo tools); their form rules above
  // make every call a requestable denial.
  const current = await currentDocument();
  const tools = { ...current.body.defaults.tools };
  let missing = false;
  for (const tool of CONFORMANCE_FIXTURE_TOOLS) {
    if (tools[tool.name] === undefined) {
      tools[tool.name] = "allow";
      missing = true;
    }
  }
  if (missing) {
    const saved = await saveDocument({ ...current.body, defaults: { ...current.body.defaults, tools } }, "conformance", new Date(), { note: "Conformance fixtures permitted." });
    if (!saved.ok) throw new Error(`conformance policy not saved: ${saved.problems.map((p) => p.message).join("; ")}`);
  }
}
