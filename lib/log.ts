/**
 * The server log: one JSON line per event (pino), at the level COUNTERSIGN_LOG_LEVEL names (default info), each
 * carrying the id of the request being handled (lib/request-context.ts) when there is one.
 *
 * What a line may say about a failure: where it happened (words of the code's own) and the error's class. Never
 * the error's message, its stack (frames carry absolute paths) or anything from a request: messages of tool
 * errors, parse errors and driver errors can quote the arguments they choked on (SEP "Durable sensitive state":
 * keep them out of ordinary logs). Fields are plain numbers, booleans and short strings the code chose; nothing
 * here serializes an object it was handed.
 */
import pino, { type Logger } from "pino";
import { currentRequestId } from "./request-context";

const NAME = /^[A-Za-z_$][\w$]{0,63}$/;
const LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type Level = (typeof LEVELS)[number];

/** The class of a thrown value, from its constructor (an error's `name` is data and may carry anything). */
export function errorClass(err: unknown): string {
  if (err === null) return "null";
  if (typeof err !== "object" && typeof err !== "function") return typeof err;
  const ctor = (Object.getPrototypeOf(err) as { constructor?: { name?: unknown } } | null)?.constructor?.name;
  const name = typeof ctor === "string" && NAME.test(ctor) ? ctor : "Object";
  const code = (err as { code?: unknown }).code;
  return typeof code === "string" && /^[A-Z][A-Z0-9_]{0,15}$/.test(code) ? `${name} ${code}` : name;
}

/** `where` is reduced to one line of plain words (no line breaks that could forge log lines or frames). */
export function safeWhere(where: string): string {
  const cleaned = where.split(/[\r\n]/)[0].replace(/[^\w ./-]/g, "?").trim().slice(0, 80);
  return cleaned || "?";
}

/** The level from COUNTERSIGN_LOG_LEVEL; an unknown value falls back to info. */
export function logLevel(value = process.env.COUNTERSIGN_LOG_LEVEL): Level {
  const v = value?.trim().toLowerCase();
  return LEVELS.find((l) => l === v) ?? "info";
}

export type LogDestination = { write(line: string): void };

function build(destination?: LogDestination, level: Level = logLevel()): Logger {
  return pino(
    {
      name: "countersign",
      level,
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      mixin() {
        const requestId = currentRequestId();
        return requestId ? { requestId } : {};
      },
    },
    destination ?? pino.destination({ dest: 1, sync: true }),
  );
}

// One logger per process, whichever bundle loads this module first.
const holder = globalThis as unknown as { __countersignLogger?: Logger };

function logger(): Logger {
  return (holder.__countersignLogger ??= build());
}

/** Sends the log to `destination` (tests read the lines), or back to stdout, at `level` (default: COUNTERSIGN_LOG_LEVEL). */
export function setLogDestination(destination?: LogDestination, level?: Level): void {
  holder.__countersignLogger = build(destination, level);
}

/** Fields a line may carry: values the code chose, never a request's text. */
export type LogFields = Record<string, string | number | boolean | null>;

export function logInfo(msg: string, fields: LogFields = {}): void {
  logger().info(fields, msg);
}

export function logWarn(msg: string, fields: LogFields = {}): void {
  logger().warn(fields, msg);
}

export function logFailure(where: string, err: unknown): void {
  const at = safeWhere(where);
  logger().error({ where: at, errorClass: errorClass(err) }, `${at} failed`);
}

const METHODS = new Set(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]);

/** One line per handled request: the route's own name, the method, the status and how long it took. */
export function logRequest(route: string, method: string, status: number, ms: number): void {
  const fields = { route: safeWhere(route), method: METHODS.has(method) ? method : "other", status, ms: Math.round(ms * 10) / 10 };
  if (status >= 500) logger().error(fields, "request failed");
  else if (status === 401 || status === 403) logger().warn(fields, "request refused");
  else logger().info(fields, "request handled");
}
