import { ApiError } from '../errors/ApiError';

/**
 * The reasoning effort levels a model's upstream takes, from its config's `reasoning_effort`: a list
 * of levels (e.g. `["low", "medium", "high"]`, values as callers send them: `reasoning_effort`,
 * `output_config.effort`, `reasoning.effort`), `false` for none, absent (or anything else) for any.
 */
export function effortLevels(config: Record<string, unknown> | undefined): readonly string[] | false | undefined {
  const v = config?.reasoning_effort;
  if (v === false) return false;
  return Array.isArray(v) ? (v.filter((x) => typeof x === 'string') as string[]) : undefined;
}

/**
 * An effort level the model's config does not list: 400 `unsupported_parameter` naming the field the
 * caller sent it in (`param`), before anything is sent or billed, rather than the upstream's 400.
 */
export function refuseEffortLevel(effort: unknown, config: Record<string, unknown> | undefined, param: string): void {
  const levels = effortLevels(config);
  if (!levels || effort === undefined || effort === null || levels.includes(effort as string)) return;
  const takes = levels.length ? `it takes ${levels.map((l) => `'${l}'`).join(', ')}` : 'it takes none';
  throw new ApiError(400, 'unsupported_parameter', `\`${param}\` '${String(effort)}' is not supported on this model (${takes}).`, { param });
}
