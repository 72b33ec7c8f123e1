/** The tools an agent can call. Each has a real side effect; policy decides which calls need approval. */
import { z } from "zod";
import { digest } from "../canonical";
import { CONFORMANCE_FIXTURE_TOOLS, conformanceMode } from "./conformance-fixtures";
import { deletePath } from "./delete-path";
import { deployService } from "./deploy-service";
import { issueRefund } from "./issue-refund";
import { wireTransfer } from "./wire-transfer";
import type { ToolDef } from "./types";
import type { PolicyTool } from "../policy/schema";

const TOOLS: ToolDef[] = [issueRefund, wireTransfer, deletePath, deployService];

/** The demo tools, plus the conformance suite's task fixtures when the server runs in conformance mode. */
function tools(): ToolDef[] {
  return conformanceMode() ? [...TOOLS, ...CONFORMANCE_FIXTURE_TOOLS] : TOOLS;
}

export function getTool(name: string): ToolDef | undefined {
  return tools().find((t) => t.name === name);
}

export function inputSchemaOf(tool: ToolDef): Record<string, unknown> {
  return z.toJSONSchema(tool.schema) as Record<string, unknown>;
}

/** Identifies the tool's implementation contract: name, input schema and resource mapping. */
export function toolVersion(tool: ToolDef): string {
  return digest({ name: tool.name, inputSchema: inputSchemaOf(tool), mappingVersion: tool.mappingVersion });
}

export function listTools(): { name: string; title: string; description: string; inputSchema: Record<string, unknown> }[] {
  return tools().map((t) => ({ name: t.name, title: t.title, description: t.description, inputSchema: inputSchemaOf(t) }));
}

/** What policy knows of every tool: its input schema and the shape of the resource its mapping reads. */
export function policyTools(): PolicyTool[] {
  // The catalog is fixed for the life of the process (per mode): computed once, not on every call.
  const mode = conformanceMode() ? "conformance" : "demo";
  const hit = catalogs.get(mode);
  if (hit) return hit;
  const catalog = tools().map((t) => ({ name: t.name, inputSchema: inputSchemaOf(t), resourceEntity: t.policyResource.entity, resourceShape: t.policyResource.shape }));
  catalogs.set(mode, catalog);
  return catalog;
}

const catalogs = new Map<string, PolicyTool[]>();
