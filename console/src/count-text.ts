/** A list's count: lists count up to 10,000 matching rows (docs/api-design.md). */
export interface Counted {
  totalResults: number;
  totalResultsExact: boolean;
}

/** A list's count in words, with thousands separated: the number, or "more than 10,000" where the list stopped counting. */
export function totalText(counted: Counted): string {
  const count = counted.totalResults.toLocaleString('en-US');
  return counted.totalResultsExact ? count : `more than ${count}`;
}
