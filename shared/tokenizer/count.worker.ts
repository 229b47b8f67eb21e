import { tokensWithin } from './bounded';

export interface CountTask {
  profile: string | undefined;
  texts: string[];
  /** Stop early (answer `false`) once the total exceeds this. */
  limit: number;
  /** Count each text on its own, each bounded by `limit` (an array answer), instead of the total. */
  each?: boolean;
}

/**
 * Runs in a worker thread (pool.ts): the total tokens of `texts`, or false past `limit`; with `each`,
 * every text's own count (false for one past `limit`), stopping at the first that does not fit.
 */
export default function count(task: CountTask): number | false | Array<number | false> {
  if (task.each) {
    const out: Array<number | false> = [];
    for (const t of task.texts) {
      const n = tokensWithin(task.profile, t, task.limit);
      out.push(n);
      if (n === false) break;
    }
    return out;
  }
  let total = 0;
  for (const t of task.texts) {
    const n = tokensWithin(task.profile, t, task.limit - total);
    if (n === false) return false;
    total += n;
  }
  return total;
}
