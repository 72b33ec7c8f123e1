/** Summary templates: one line whose placeholders name arguments of the tool's accepted input schema. */
import { describe, expect, it } from "vitest";
import { summaryTemplateProblem } from "./summary";

const write = { description: "Write a file", inputSchema: { type: "object", properties: { path: { type: "string" }, content: { type: "string" } } }, annotations: {} };
const none = { description: "Ping", inputSchema: { type: "object" }, annotations: {} };

describe("summaryTemplateProblem", () => {
  it("accepts placeholders that name the tool's arguments, and text without placeholders", () => {
    expect(summaryTemplateProblem("write {path}", write)).toBeNull();
    expect(summaryTemplateProblem("write {content} to {path} ({path})", write)).toBeNull();
    expect(summaryTemplateProblem("ping the server", none)).toBeNull();
  });

  it("refuses an unknown placeholder, naming the arguments there are", () => {
    expect(summaryTemplateProblem("write {file}", write)).toBe("The tool has no argument {file}; its arguments are {content}, {path}.");
    expect(summaryTemplateProblem("ping {host}", none)).toBe("The tool has no argument {host}; it takes no arguments.");
  });

  it("refuses malformed placeholders, lone braces, empty, long or multi-line text", () => {
    expect(summaryTemplateProblem("write {a b}", write)).toMatch(/is not a placeholder/);
    expect(summaryTemplateProblem("write {path", write)).toMatch(/brace without its pair/);
    expect(summaryTemplateProblem("write path}", write)).toMatch(/brace without its pair/);
    for (const t of ["", "   ", "x".repeat(201), "write\n{path}"]) expect(summaryTemplateProblem(t, write)).toBe("A summary template is one line of at most 200 characters.");
  });
});
