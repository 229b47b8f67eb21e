import { tokensWithin } from './bounded';

export interface CountTask {
  profile: string | undefined;
  texts: string[];
  /** Stop early (answer `false`) once the total exceeds this. */
  limit: number;
}

/** Runs in a worker thread (pool.ts): the total tokens of `texts`, or false past `limit`. */
export default function count(task: CountTask): number | false {
  let total = 0;
  for (const t of task.texts) {
    const n = tokensWithin(task.profile, t, task.limit - total);
    if (n === false) return false;
    total += n;
  }
  return total;
}
