/** Records a deployment of a service version to an environment. */
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

export const deployService: ToolDef<Args> = {
  name: "deploy_service",
  title: "Deploy a service",
  description: "Deploy a version of a service to staging or production. Production deploys need an SRE's approval.",
  schema,
  mappingVersion: 1,
  async resource(args) {
    return { type: "service", id: args.service, properties: { environment: args.environment, version: args.version } };
  },
  summary(args) {
    return `Deploy ${args.service} ${args.version} to ${args.environment}`;
  },
  async run(args, ctx) {
    const d = await db().deployment.create({
      data: { service: args.service, environment: args.environment, version: args.version, taskId: ctx.taskId, createdAt: ctx.now },
    });
    return { text: `Deployment ${d.id}: ${args.service} ${args.version} deployed to ${args.environment}.`, structured: { deployment_id: d.id, ...args } };
  },
};
