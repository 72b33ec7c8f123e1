/** The part of oidc-provider (which ships no types) the OAuth tests use. */
declare module "oidc-provider" {
  import type { IncomingMessage, ServerResponse } from "node:http";
  export const errors: { InvalidTarget: new (description?: string) => Error };
  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
  }
}
