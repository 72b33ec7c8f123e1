/** The tools an agent can call. Each has a real side effect; policy decides which calls need approval. */
import { z } from "zod";
import { digest } from "../canonical";
import { deletePath } from "./delete-path";
import { deployService } from "./deploy-service";
import { issueRefund } from "./issue-refund";
import { wireTransfer } from "./wire-transfer";
import type { ToolDef } from "./types";

const TOOLS: ToolDef[] = [issueRefund, wireTransfer, deletePath, deployService];

export function getTool(name: string): ToolDef | undefined {
  return TOOLS.find((t) => t.name === name);
}

export function inputSchemaOf(tool: ToolDef): Record<string, unknown> {
  return z.toJSONSchema(tool.schema) as Record<string, unknown>;
}

/** Identifies the tool's implementation contract: name, input schema and resource mapping. */
export function toolVersion(tool: ToolDef): string {
  return digest({ name: tool.name, inputSchema: inputSchemaOf(tool), mappingVersion: tool.mappingVersion });
}

export function listTools(): { name: string; title: string; description: string; inputSchema: Record<string, unknown> }[] {
  return TOOLS.map((t) => ({ name: t.name, title: t.title, description: t.description, inputSchema: inputSchemaOf(t) }));
}
