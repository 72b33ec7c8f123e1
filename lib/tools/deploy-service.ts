/**
 * Records a deployment of a service version to an environment. Spellings are exact: the environment is one of
 * two words and the service a lowercase ASCII name, so a capital, a space or a look-alike letter is invalid input,
 * never a different target. A version is canonical once the optional "v" and leading zeros are dropped
 * (v1.04.2 is 1.4.2): policy sees and the deployment records that form.
 */
import { z } from "zod";
import { db } from "../db/client";
import type { ToolDef } from "./types";

const schema = z
  .object({
    service: z.string().regex(/^[a-z][a-z0-9-]{1,40}$/, "service looks like checkout-api"),
    environment: z.enum(["staging", "production"]),
    version: z.string().regex(/^v?\d+\.\d+\.\d+$/, "version looks like 1.4.2"),
  })
  .strict();
type Args = z.infer<typeof schema>;

export function canonicalVersion(version: string): string {
  return version
    .replace(/^v/, "")
    .split(".")
    .map((n) => n.replace(/^0+(?=\d)/, ""))
    .join(".");
}

export const deployService: ToolDef<Args> = {
  name: "deploy_service",
  title: "Deploy a service",
  description: "Deploy a version of a service to staging or production. Production deploys need an SRE's approval.",
  schema,
  mappingVersion: 2,
  policyResource: { entity: "Service", shape: { environment: { type: "String" }, version: { type: "String" } } },
  async resource(args) {
    return { type: "service", id: args.service, properties: { environment: args.environment, version: canonicalVersion(args.version) } };
  },
  summary(args) {
    return `Deploy ${args.service} ${canonicalVersion(args.version)} to ${args.environment}`;
  },
  effect(args) {
    return { does: `deploys ${args.service} ${canonicalVersion(args.version)} to ${args.environment}`, button: `deploy to ${args.environment}` };
  },
  async run(args, ctx) {
    const version = canonicalVersion(args.version);
    const d = await db().deployment.create({
      data: { service: args.service, environment: args.environment, version, taskId: ctx.taskId, createdAt: ctx.now },
    });
    return {
      text: `Deployment ${d.id}: ${args.service} ${version} deployed to ${args.environment}.`,
      structured: { deployment_id: d.id, service: args.service, environment: args.environment, version },
    };
  },
};
