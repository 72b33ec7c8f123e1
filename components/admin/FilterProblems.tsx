/** What a filter could not read, said instead of silently showing everything (the list is not shown meanwhile). */
export function FilterProblems({ problems }: { problems: string[] }) {
  if (problems.length === 0) return null;
  return (
    <div role="alert" className="rounded-lg border border-red-300 bg-red-50 px-4 py-3 text-sm text-red-950" data-testid="filter-problems">
      <p className="font-medium">{problems.length === 1 ? "This filter cannot be applied:" : "These filters cannot be applied:"}</p>
      <ul className="mt-1 list-disc pl-5">
        {problems.map((p) => (
          <li key={p}>{p}</li>
        ))}
      </ul>
      <p className="mt-1">Nothing is listed until the filter is fixed or cleared.</p>
    </div>
  );
}
