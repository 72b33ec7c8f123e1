/** The built-in tool source: the demo tools compiled into Countersign (plus the conformance fixtures in that mode). */
import { CONFORMANCE_FIXTURE_TOOLS, conformanceMode } from "./conformance-fixtures";
import { deletePath } from "./delete-path";
import { deployService } from "./deploy-service";
import { issueRefund } from "./issue-refund";
import { wireTransfer } from "./wire-transfer";
import type { ToolDef } from "./types";

const TOOLS: ToolDef[] = [issueRefund, wireTransfer, deletePath, deployService];
const WITH_FIXTURES: ToolDef[] = [...TOOLS, ...CONFORMANCE_FIXTURE_TOOLS];

export function builtinTools(): ToolDef[] {
  return conformanceMode() ? WITH_FIXTURES : TOOLS;
}
