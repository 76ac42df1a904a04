/**
 * A count with its noun, as the envelopes' messages write it: `1 campaign`, `3 campaigns`,
 * `2 candidacies` (give the plural when adding an `s` does not make it).
 */
export function counted(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}
