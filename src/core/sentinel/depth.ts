// A bound on the finished tree's depth. The parser's recursion is limited (cursor.ts), but loops
// build left-leaning chains (`a + b + c …`, `x.a.b.c …`) whose depth that limit does not see.
// Checking here lets evaluators and printers recurse over any tree parsePolicy returns.

import type { Program } from './ast';
import { SentinelSyntaxError, type Pos } from './errors';

/** Deepest tree parsePolicy returns, counting every node from the Program down. */
export const MAX_TREE_DEPTH = 1000;

export function checkTreeDepth(program: Program, file: string): void {
  // Iterative walk: the point is to not recurse on a tree that may be too deep.
  const stack: [unknown, number][] = [[program, 0]];
  while (stack.length > 0) {
    const [value, parentDepth] = stack.pop() as [unknown, number];
    if (Array.isArray(value)) {
      for (const item of value) stack.push([item, parentDepth]);
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    const record = value as Record<string, unknown>;
    const depth = 'kind' in record ? parentDepth + 1 : parentDepth;
    if (depth > MAX_TREE_DEPTH) {
      const pos = (record.pos as Pos | undefined) ?? { line: 1, column: 1 };
      throw new SentinelSyntaxError(
        file,
        pos,
        `an expression at most ${MAX_TREE_DEPTH} levels deep`,
        'a deeper one',
        `expression nested deeper than ${MAX_TREE_DEPTH} levels`,
      );
    }
    for (const key in record) {
      if (key !== 'pos' && key !== 'opPos') stack.push([record[key], depth]);
    }
  }
}
