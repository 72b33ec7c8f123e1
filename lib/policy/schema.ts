/**
 * The Cedar schema Countersign evaluates against, generated from the tools: one action per tool, whose context
 * holds the call's arguments (typed from the tool's input schema), the recent history policy asked for, and the
 * time; the principal is the agent (in its user, in the user's groups); the resource is what the tool's mapping
 * reads now. A policy that names an argument that does not exist, or compares it with the wrong type, fails
 * validation against this schema before it can be saved.
 */
import type { CedarSchema, CedarValue } from "./cedar";

export type ResourceAttr =
  | { type: "String" | "Long" | "Boolean"; optional?: boolean }
  /**
   * A set of strings (the resolved paths of a list argument). `folders` names the attribute holding every folder
   * those paths lie in (and the paths themselves), which is how a rule over a folder reads a set: Cedar has no
   * "any element is like" test, but it has `contains`.
   */
  | { type: "StringSet"; optional?: boolean; folders?: string }
  /** Money as a record { minor: Long, currency: String } built from two properties of the mapping. */
  | { type: "Money"; minor: string; currency: string };

/** What policy needs to know of a tool, wherever the tool comes from. */
export type PolicyTool = {
  name: string;
  inputSchema: Record<string, unknown>;
  /** Cedar entity type of the resource, e.g. "Order". */
  resourceEntity: string;
  resourceShape: Record<string, ResourceAttr>;
};

export type HistorySpec = { name: string; tool: string };

type CedarType =
  | { type: "String" | "Long" | "Boolean" }
  | { type: "Extension"; name: "decimal" | "datetime" }
  | { type: "Set"; element: CedarType }
  | { type: "Record"; attributes: Record<string, CedarType & { required?: boolean }> };

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function entityTypeName(resourceType: string): string {
  const words = resourceType.split(/[^A-Za-z0-9]+/).filter(Boolean);
  const name = words.map((w) => w[0].toUpperCase() + w.slice(1)).join("");
  return IDENT.test(name) && !["Agent", "User", "Group", "Action"].includes(name) ? name : `Resource${name.replace(/^[^A-Za-z_]+/, "")}`;
}

/** The Cedar type of a JSON Schema, or null when Cedar cannot represent it (such arguments are left out of the context). */
export function cedarTypeOf(schema: unknown, depth = 0): CedarType | null {
  if (!schema || typeof schema !== "object" || depth > 8) return null;
  const s = schema as Record<string, unknown>;
  let type = s.type;
  if (type === undefined && Array.isArray(s.enum) && s.enum.length > 0 && s.enum.every((v) => typeof v === "string")) type = "string";
  if (type === undefined && typeof s.const === "string") type = "string";
  switch (type) {
    case "string":
      return { type: "String" };
    case "integer":
      return { type: "Long" };
    case "number":
      return { type: "Extension", name: "decimal" };
    case "boolean":
      return { type: "Boolean" };
    case "array": {
      const element = cedarTypeOf(s.items, depth + 1);
      return element ? { type: "Set", element } : null;
    }
    case "object": {
      const props = (s.properties ?? {}) as Record<string, unknown>;
      const required = new Set(Array.isArray(s.required) ? (s.required as string[]) : []);
      const attributes: Record<string, CedarType & { required?: boolean }> = {};
      for (const [k, v] of Object.entries(props)) {
        const t = cedarTypeOf(v, depth + 1);
        if (t) attributes[k] = { ...t, required: required.has(k) };
      }
      return { type: "Record", attributes };
    }
    default:
      return null;
  }
}

export class ContextValueError extends Error {}

/** A decimal literal Cedar accepts (digits on both sides of the point, at most four after it), or an error. */
function decimalOf(n: number): CedarValue {
  if (!Number.isFinite(n)) throw new ContextValueError("a number that is not finite");
  // Cedar's decimal is a signed 64-bit count of ten-thousandths.
  if (Math.abs(n) > 922_337_203_685_477) throw new ContextValueError("a number too large for policy to compare exactly");
  const text = String(n);
  const [whole, fraction = "0"] = text.split(".");
  // Within that bound JavaScript writes only a fraction far smaller than 0.0001 in exponent form (1e-7).
  if (/e/i.test(text) || fraction.length > 4) throw new ContextValueError("a number with more than four digits after the point, which policy cannot compare exactly");
  return { __extn: { fn: "decimal", arg: `${whole}.${fraction}` } };
}

/** The Cedar value of `value` under `type`; attributes the type leaves out are dropped. Throws ContextValueError. */
export function cedarValueOf(value: unknown, type: CedarType): CedarValue {
  switch (type.type) {
    case "String":
      if (typeof value !== "string") throw new ContextValueError("expected a string");
      return value;
    case "Long":
      if (typeof value !== "number" || !Number.isSafeInteger(value)) throw new ContextValueError("expected a whole number");
      return value;
    case "Boolean":
      if (typeof value !== "boolean") throw new ContextValueError("expected true or false");
      return value;
    case "Extension":
      if (type.name === "decimal") {
        if (typeof value !== "number") throw new ContextValueError("expected a number");
        return decimalOf(value);
      }
      if (!(value instanceof Date)) throw new ContextValueError("expected a time");
      return { __extn: { fn: "datetime", arg: value.toISOString() } };
    case "Set":
      if (!Array.isArray(value)) throw new ContextValueError("expected a list");
      return value.map((v) => cedarValueOf(v, type.element));
    case "Record": {
      if (!value || typeof value !== "object" || Array.isArray(value)) throw new ContextValueError("expected an object");
      const out: Record<string, CedarValue> = {};
      for (const [k, t] of Object.entries(type.attributes)) {
        const v = (value as Record<string, unknown>)[k];
        if (v === undefined || v === null) {
          if (t.required) throw new ContextValueError(`${k} is missing`);
          continue;
        }
        out[k] = cedarValueOf(v, t);
      }
      return out;
    }
  }
}

const MONEY: CedarType = {
  type: "Record",
  attributes: { minor: { type: "Long", required: true }, currency: { type: "String", required: true } },
};

function resourceType(shape: Record<string, ResourceAttr>): CedarType & { type: "Record" } {
  const attributes: Record<string, CedarType & { required?: boolean }> = {};
  for (const [k, a] of Object.entries(shape)) {
    attributes[k] =
      a.type === "Money"
        ? { ...MONEY, required: true }
        : a.type === "StringSet"
          ? { type: "Set", element: { type: "String" }, required: !a.optional }
          : { type: a.type, required: !a.optional };
  }
  return { type: "Record", attributes };
}

/** The resource entity's attributes for Cedar, from the mapping's properties. Throws ContextValueError. */
export function resourceAttributes(shape: Record<string, ResourceAttr>, properties: Record<string, unknown>): Record<string, CedarValue> {
  const out: Record<string, CedarValue> = {};
  for (const [k, a] of Object.entries(shape)) {
    if (a.type === "Money") {
      out[k] = cedarValueOf({ minor: properties[a.minor], currency: properties[a.currency] }, MONEY);
      continue;
    }
    const v = properties[k];
    if (v === undefined || v === null) {
      if (!a.optional) throw new ContextValueError(`the resource has no ${k}`);
      continue;
    }
    out[k] = cedarValueOf(v, a.type === "StringSet" ? { type: "Set", element: { type: "String" } } : { type: a.type });
  }
  return out;
}

export function argsType(tool: PolicyTool): CedarType & { type: "Record" } {
  const t = cedarTypeOf(tool.inputSchema);
  return t && t.type === "Record" ? t : { type: "Record", attributes: {} };
}

export function timeType(zones: string[]): CedarType {
  const zone: CedarType = {
    type: "Record",
    attributes: {
      hour: { type: "Long", required: true },
      minute: { type: "Long", required: true },
      weekday: { type: "Long", required: true },
      date: { type: "String", required: true },
    },
  };
  return {
    type: "Record",
    attributes: {
      now: { type: "Extension", name: "datetime", required: true },
      zones: { type: "Record", attributes: Object.fromEntries(zones.map((z) => [z, { ...zone, required: true }])), required: true },
    },
  };
}

export function historyType(specs: HistorySpec[], tool: string): CedarType {
  const measure: CedarType = { type: "Record", attributes: { total: { type: "Long", required: true }, count: { type: "Long", required: true } } };
  return { type: "Record", attributes: Object.fromEntries(specs.filter((h) => h.tool === tool).map((h) => [h.name, { ...measure, required: true }])) };
}

export function contextType(tool: PolicyTool, history: HistorySpec[], zones: string[]): CedarType & { type: "Record" } {
  return {
    type: "Record",
    attributes: {
      args: { ...argsType(tool), required: true },
      history: { ...historyType(history, tool.name), required: true },
      time: { ...timeType(zones), required: true },
    },
  };
}

/** The whole schema, in Cedar's JSON schema format (empty namespace). */
export function buildSchema(tools: PolicyTool[], history: HistorySpec[], zones: string[]): CedarSchema {
  const entityTypes: Record<string, unknown> = {
    Group: {},
    User: {
      memberOfTypes: ["Group"],
      shape: { type: "Record", attributes: { email: { type: "String" }, name: { type: "String" }, role: { type: "String" } } },
    },
    Agent: {
      memberOfTypes: ["User"],
      shape: { type: "Record", attributes: { name: { type: "String" }, user: { type: "Entity", name: "User" } } },
    },
  };
  const shapes = new Map<string, string>();
  const actions: Record<string, unknown> = {};
  for (const tool of tools) {
    const shape = resourceType(tool.resourceShape);
    const key = JSON.stringify(shape);
    const seen = shapes.get(tool.resourceEntity);
    if (seen !== undefined && seen !== key) {
      throw new Error(`Tools disagree on the attributes of the resource type ${tool.resourceEntity}.`);
    }
    shapes.set(tool.resourceEntity, key);
    entityTypes[tool.resourceEntity] = { shape };
    actions[tool.name] = {
      appliesTo: { principalTypes: ["Agent"], resourceTypes: [tool.resourceEntity], context: contextType(tool, history, zones) },
    };
  }
  return { "": { entityTypes, actions } } as unknown as CedarSchema;
}

const formats = new Map<string, Intl.DateTimeFormat>();

type ZoneFields = { hour: number; minute: number; weekday: number; date: string };

/**
 * The fields of each zone's latest minute: every call evaluates them (formatting a date in a time zone costs
 * tens of microseconds), and within one minute of UTC they do not change. That holds since 1972, when the last
 * zone whose offset was not a whole number of minutes (Africa/Monrovia, -0:44:30) left it: an earlier instant is
 * always computed.
 */
const latestMinute = new Map<string, { minute: number; fields: ZoneFields }>();
const WHOLE_MINUTE_OFFSETS_SINCE = Date.UTC(1973, 0, 1);

/** Local wall-clock fields of `now` in a named time zone (IANA), for business-hours conditions. */
export function zoneFields(now: Date, zone: string): ZoneFields {
  const minute = Math.floor(now.getTime() / 60_000);
  const known = latestMinute.get(zone);
  if (known?.minute === minute) return { ...known.fields };
  const fields = formatZoneFields(now, zone);
  if (now.getTime() >= WHOLE_MINUTE_OFFSETS_SINCE) latestMinute.set(zone, { minute, fields: { ...fields } });
  return fields;
}

function formatZoneFields(now: Date, zone: string): ZoneFields {
  let format = formats.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      weekday: "short",
    });
    formats.set(zone, format);
  }
  const parts: Record<string, string> = {};
  for (const p of format.formatToParts(now)) parts[p.type] = p.value;
  const weekday = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"].indexOf(parts.weekday) + 1;
  return { hour: Number(parts.hour), minute: Number(parts.minute), weekday, date: `${parts.year}-${parts.month}-${parts.day}` };
}

export function validTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return /^[A-Za-z_]+(\/[A-Za-z0-9_+-]+)*$/.test(zone);
  } catch {
    return false;
  }
}

/** The call's money for history sums: the resource attribute `amount` when it is money. */
export function callMoney(shape: Record<string, ResourceAttr>, properties: Record<string, unknown>): { minor: number; currency: string } | null {
  const a = shape.amount;
  if (!a || a.type !== "Money") return null;
  const minor = properties[a.minor];
  const currency = properties[a.currency];
  return typeof minor === "number" && Number.isSafeInteger(minor) && typeof currency === "string" ? { minor, currency } : null;
}
