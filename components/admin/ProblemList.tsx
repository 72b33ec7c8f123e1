/** Problems of a policy text or file, each with its line and column when it has one. */
export type PositionedProblem = { message: string; line?: number; column?: number };

export function ProblemList({ problems, className }: { problems: PositionedProblem[]; className: string }) {
  return (
    <ul className={className}>
      {problems.map((p, i) => (
        <li key={i}>
          {p.line ? `Line ${p.line}, column ${p.column ?? 1}: ` : ""}
          {p.message}
        </li>
      ))}
    </ul>
  );
}
