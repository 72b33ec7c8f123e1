/**
 * What policy sees of a call (schema.ts): the Cedar type of each argument from the tool's input schema, the value
 * Countersign hands Cedar for it (exact, or an error that denies; never a nearby value), the resource's attributes
 * as the mapping read them, and the local time fields of business-hours conditions.
 */
import { describe, expect, it } from "vitest";
import {
  argsType,
  buildSchema,
  callMoney,
  cedarTypeOf,
  cedarValueOf,
  ContextValueError,
  entityTypeName,
  resourceAttributes,
  validTimeZone,
  zoneFields,
  type PolicyTool,
} from "./schema";

const DECIMAL = { type: "Extension", name: "decimal" } as const;
const decimal = (arg: string) => ({ __extn: { fn: "decimal", arg } });
const refused = (f: () => unknown, words: string | RegExp) => {
  expect(f).toThrow(ContextValueError);
  expect(f).toThrow(words);
};

describe("entityTypeName", () => {
  it("makes a Cedar type name of the resource type, never one of Countersign's own types", () => {
    expect(entityTypeName("order")).toBe("Order");
    expect(entityTypeName("bank-account")).toBe("BankAccount");
    for (const own of ["agent", "user", "group", "action"]) expect(entityTypeName(own)).toBe(`Resource${own[0].toUpperCase()}${own.slice(1)}`);
    expect(entityTypeName("3d model")).toBe("ResourcedModel");
    expect(entityTypeName("42nd street")).toBe("ResourcendStreet");
  });
});

describe("cedarTypeOf", () => {
  it("types the JSON Schema's scalars, lists and objects, with each property's requiredness", () => {
    expect(
      cedarTypeOf({
        type: "object",
        required: ["to", "tags"],
        properties: { to: { type: "string" }, count: { type: "integer" }, amount: { type: "number" }, urgent: { type: "boolean" }, tags: { type: "array", items: { type: "string" } } },
      }),
    ).toEqual({
      type: "Record",
      attributes: {
        to: { type: "String", required: true },
        count: { type: "Long", required: false },
        amount: { ...DECIMAL, required: false },
        urgent: { type: "Boolean", required: false },
        tags: { type: "Set", element: { type: "String" }, required: true },
      },
    });
  });

  it("an enum or a const of strings is a string; anything else without a type cannot be represented", () => {
    expect(cedarTypeOf({ enum: ["a", "b"] })).toEqual({ type: "String" });
    expect(cedarTypeOf({ const: "a" })).toEqual({ type: "String" });
    expect(cedarTypeOf({ enum: ["a", 1] })).toBeNull();
    expect(cedarTypeOf({ enum: [] })).toBeNull();
    expect(cedarTypeOf({ const: 1 })).toBeNull();
    expect(cedarTypeOf({ type: "null" })).toBeNull();
    // A declared type is the type, whatever the enum or const beside it says.
    expect(cedarTypeOf({ type: "integer", const: "a" })).toEqual({ type: "Long" });
    expect(cedarTypeOf({ type: "boolean", enum: ["a"] })).toEqual({ type: "Boolean" });
  });

  it("a list of what Cedar cannot represent is left out, not typed as a list of something else", () => {
    expect(cedarTypeOf({ type: "array", items: { type: "null" } })).toBeNull();
    expect(cedarTypeOf({ type: "object", properties: { odd: { type: "array" }, ok: { type: "integer" } } })).toEqual({
      type: "Record",
      attributes: { ok: { type: "Long", required: false } },
    });
  });

  it("stops at nine levels of nesting", () => {
    let schema: Record<string, unknown> = { type: "string" };
    for (let i = 0; i < 10; i++) schema = { type: "object", properties: { inner: schema } };
    let t = cedarTypeOf(schema) as { attributes: Record<string, unknown> } | undefined;
    let levels = 0;
    while (t?.attributes?.inner) {
      t = t.attributes.inner as typeof t;
      levels++;
    }
    expect(levels).toBe(8);
    expect(t).toEqual({ type: "Record", attributes: {}, required: false });
  });

  it("a tool whose input is not an object has no arguments for policy", () => {
    const tool = (inputSchema: Record<string, unknown>): PolicyTool => ({ name: "t", inputSchema, resourceEntity: "R", resourceShape: {} });
    expect(argsType(tool({ type: "string" }))).toEqual({ type: "Record", attributes: {} });
    expect(argsType(tool({}))).toEqual({ type: "Record", attributes: {} });
    expect(argsType(tool({ type: "object", properties: { a: { type: "string" } } }))).toEqual({ type: "Record", attributes: { a: { type: "String", required: false } } });
  });
});

describe("cedarValueOf: exact values or an error", () => {
  it("a number is an exact decimal of at most four places", () => {
    expect(cedarValueOf(2, DECIMAL)).toEqual(decimal("2.0"));
    expect(cedarValueOf(1.5, DECIMAL)).toEqual(decimal("1.5"));
    expect(cedarValueOf(-0.0001, DECIMAL)).toEqual(decimal("-0.0001"));
    expect(cedarValueOf(922_337_203_685_477, DECIMAL)).toEqual(decimal("922337203685477.0"));
  });

  it("refuses a number it cannot hand over exactly: five places, a tiny fraction, too large, not finite, not a number", () => {
    refused(() => cedarValueOf(0.00001, DECIMAL), /more than four digits/);
    refused(() => cedarValueOf(1e-7, DECIMAL), /more than four digits/);
    refused(() => cedarValueOf(922_337_203_685_478, DECIMAL), /too large/);
    refused(() => cedarValueOf(-1e21, DECIMAL), /too large/);
    refused(() => cedarValueOf(Infinity, DECIMAL), /not finite/);
    refused(() => cedarValueOf(NaN, DECIMAL), /not finite/);
    refused(() => cedarValueOf("1.5", DECIMAL), "expected a number");
  });

  it("a whole number is a safe integer; strings, booleans and times are what they say", () => {
    expect(cedarValueOf(2 ** 53 - 1, { type: "Long" })).toBe(2 ** 53 - 1);
    refused(() => cedarValueOf(2 ** 53, { type: "Long" }), "expected a whole number");
    refused(() => cedarValueOf(1.5, { type: "Long" }), "expected a whole number");
    refused(() => cedarValueOf("1", { type: "Long" }), "expected a whole number");
    expect(cedarValueOf("x", { type: "String" })).toBe("x");
    refused(() => cedarValueOf(1, { type: "String" }), "expected a string");
    expect(cedarValueOf(false, { type: "Boolean" })).toBe(false);
    refused(() => cedarValueOf("false", { type: "Boolean" }), "expected true or false");
    const at = new Date("2100-01-02T03:04:05.000Z");
    expect(cedarValueOf(at, { type: "Extension", name: "datetime" })).toEqual({ __extn: { fn: "datetime", arg: "2100-01-02T03:04:05.000Z" } });
    refused(() => cedarValueOf("2100-01-02T03:04:05.000Z", { type: "Extension", name: "datetime" }), "expected a time");
  });

  it("a list element by element; an object attribute by attribute, keeping only what the type declares", () => {
    expect(cedarValueOf(["a", "b"], { type: "Set", element: { type: "String" } })).toEqual(["a", "b"]);
    refused(() => cedarValueOf("a", { type: "Set", element: { type: "String" } }), "expected a list");
    refused(() => cedarValueOf(["a", 1], { type: "Set", element: { type: "String" } }), "expected a string");
    const record = { type: "Record", attributes: { need: { type: "String", required: true }, may: { type: "Long", required: false } } } as const;
    expect(cedarValueOf({ need: "x", may: 3, extra: true }, record)).toEqual({ need: "x", may: 3 });
    expect(cedarValueOf({ need: "x", may: null }, record)).toEqual({ need: "x" });
    refused(() => cedarValueOf({ need: null }, record), "need is missing");
    refused(() => cedarValueOf({}, record), "need is missing");
    refused(() => cedarValueOf(["x"], record), "expected an object");
    refused(() => cedarValueOf(null, record), "expected an object");
    // Not even when the type requires nothing: a string or a number is not an object whose attributes are all absent.
    const optional = { type: "Record", attributes: { may: { type: "Long", required: false } } } as const;
    for (const scalar of ["may", 3, true]) refused(() => cedarValueOf(scalar, optional), "expected an object");
  });
});

describe("resourceAttributes: the resource as the mapping read it", () => {
  const shape = {
    amount: { type: "Money", minor: "amountMinor", currency: "currency" },
    status: { type: "String" },
    note: { type: "String", optional: true },
    paths: { type: "StringSet", optional: true },
  } as const;

  it("builds money from its two properties, a set from a list, and leaves out an optional attribute not read", () => {
    expect(resourceAttributes(shape, { amountMinor: 1500, currency: "EUR", status: "paid", paths: ["a", "b"] })).toEqual({
      amount: { minor: 1500, currency: "EUR" },
      status: "paid",
      paths: ["a", "b"],
    });
    expect(resourceAttributes(shape, { amountMinor: 1, currency: "EUR", status: "paid", note: null })).toEqual({ amount: { minor: 1, currency: "EUR" }, status: "paid" });
  });

  it("a required attribute the mapping could not read is an error, never a blank", () => {
    refused(() => resourceAttributes(shape, { amountMinor: 1, currency: "EUR" }), "the resource has no status");
    refused(() => resourceAttributes(shape, { amountMinor: 1, currency: "EUR", status: null }), "the resource has no status");
    refused(() => resourceAttributes(shape, { currency: "EUR", status: "paid" }), "minor is missing");
    refused(() => resourceAttributes(shape, { amountMinor: 1, currency: "EUR", status: "paid", paths: "a" }), "expected a list");
  });

  it("callMoney reads the call's money for history sums only from a money attribute named amount", () => {
    expect(callMoney(shape, { amountMinor: 1500, currency: "EUR" })).toEqual({ minor: 1500, currency: "EUR" });
    expect(callMoney(shape, { amountMinor: 1.5, currency: "EUR" })).toBeNull();
    expect(callMoney(shape, { amountMinor: 2 ** 53, currency: "EUR" })).toBeNull();
    expect(callMoney(shape, { amountMinor: "1500", currency: "EUR" })).toBeNull();
    expect(callMoney(shape, { amountMinor: 1500, currency: 978 })).toBeNull();
    expect(callMoney({ amount: { type: "Long" } }, { amount: 1500 })).toBeNull();
    expect(callMoney({}, {})).toBeNull();
  });
});

describe("buildSchema", () => {
  const tool = (name: string, resourceShape: PolicyTool["resourceShape"]): PolicyTool => ({ name, inputSchema: { type: "object" }, resourceEntity: "Order", resourceShape });

  it("declares the resource's attributes, required unless optional", () => {
    const schema = buildSchema([tool("a", { status: { type: "String" }, note: { type: "String", optional: true }, paths: { type: "StringSet" }, tags: { type: "StringSet", optional: true } })], [], []) as unknown as Record<
      string,
      { entityTypes: Record<string, { shape: unknown }> }
    >;
    expect(schema[""].entityTypes.Order.shape).toEqual({
      type: "Record",
      attributes: {
        status: { type: "String", required: true },
        note: { type: "String", required: false },
        paths: { type: "Set", element: { type: "String" }, required: true },
        tags: { type: "Set", element: { type: "String" }, required: false },
      },
    });
  });

  it("refuses two tools that disagree on the attributes of one resource type", () => {
    expect(() => buildSchema([tool("a", { status: { type: "String" } }), tool("b", { status: { type: "String" } })], [], [])).not.toThrow();
    expect(() => buildSchema([tool("a", { status: { type: "String" } }), tool("b", { status: { type: "Long" } })], [], [])).toThrow(
      "Tools disagree on the attributes of the resource type Order.",
    );
  });
});

describe("time zones", () => {
  it("gives the local hour (0 to 23), minute, weekday (Monday 1 to Sunday 7) and date", () => {
    // Friday 2100-12-03 23:30 UTC is Saturday 00:30 in Berlin.
    expect(zoneFields(new Date("2100-12-03T23:30:00Z"), "Europe/Berlin")).toEqual({ hour: 0, minute: 30, weekday: 6, date: "2100-12-04" });
    expect(zoneFields(new Date("2100-12-05T09:05:00Z"), "UTC")).toEqual({ hour: 9, minute: 5, weekday: 7, date: "2100-12-05" });
    expect(zoneFields(new Date("2100-12-06T09:05:00Z"), "America/New_York")).toEqual({ hour: 4, minute: 5, weekday: 1, date: "2100-12-06" });
    // Every day of a week, Monday 2100-12-06 to Sunday 2100-12-12.
    const week = [6, 7, 8, 9, 10, 11, 12].map((day) => zoneFields(new Date(`2100-12-${String(day).padStart(2, "0")}T12:00:00Z`), "UTC").weekday);
    expect(week).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it("gives, minute after minute, what the zone's own clock shows at each instant (across a change of offset)", () => {
    const clock = (t: number, zone: string) => {
      const p = Object.fromEntries(
        new Intl.DateTimeFormat("en-GB", { timeZone: zone, hourCycle: "h23", year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", weekday: "short" })
          .formatToParts(new Date(t))
          .map((x) => [x.type, x.value]),
      );
      return { hour: Number(p.hour), minute: Number(p.minute), weekday: ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"].indexOf(p.weekday) + 1, date: `${p.year}-${p.month}-${p.day}` };
    };
    // Around the spring change of Berlin and New York, and of Lord Howe (half an hour), in zones a half and three
    // quarters of an hour off UTC, every 7.919 s for two hours.
    const around = [
      ["Europe/Berlin", "2100-03-28T00:20:00Z"],
      ["America/New_York", "2100-03-14T06:20:00Z"],
      ["Australia/Lord_Howe", "2100-10-02T15:10:00Z"],
      ["Asia/Kolkata", "2100-01-01T00:00:00Z"],
      ["Asia/Kathmandu", "2100-01-01T00:00:00Z"],
    ] as const;
    for (const [zone, start] of around) {
      const from = Date.parse(start);
      for (let t = from; t < from + 2 * 3600_000; t += 7919) {
        const got = zoneFields(new Date(t), zone);
        expect(got, `${zone} at ${new Date(t).toISOString()}`).toEqual(clock(t, zone));
        got.hour = -1; // a caller's change is its own
      }
    }
  });

  it("before 1973 a zone's minute need not start with UTC's: Monrovia's clock turns within a UTC minute", () => {
    // 1971: Africa/Monrovia was 44 minutes 30 seconds behind UTC, so 12:00:20 UTC is 11:15:50 and 12:00:40 is 11:16:10.
    expect(zoneFields(new Date("1971-06-01T12:00:20Z"), "Africa/Monrovia")).toMatchObject({ hour: 11, minute: 15 });
    expect(zoneFields(new Date("1971-06-01T12:00:40Z"), "Africa/Monrovia")).toMatchObject({ hour: 11, minute: 16 });
  });

  it("accepts IANA zone names only", () => {
    for (const zone of ["Europe/Berlin", "UTC", "America/Argentina/Buenos_Aires", "Etc/GMT+1"]) expect(validTimeZone(zone)).toBe(true);
    for (const zone of ["Nowhere/City", "+01:00", "", "Europe/Berlin ", "EST5EDT"]) expect(validTimeZone(zone)).toBe(false);
  });
});
