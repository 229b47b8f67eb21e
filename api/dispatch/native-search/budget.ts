import { config } from '../../../shared/config/env';
import { NATIVE_NAMES, type NativeKind, type NativeToolSet } from './tools';

/**
 * The searches and fetches one native request may run: each tool's `max_uses` and
 * NATIVE_MAX_SEARCHES for both together. Everything the request runs takes from it: the model's
 * calls in the loop and the re-runs of earlier results the client did not echo.
 */
export class NativeBudget {
  private readonly uses: Record<NativeKind, number> = { search: 0, fetch: 0 };
  private readonly maxSearches = config().nativeMaxSearches;

  constructor(private readonly set: NativeToolSet) {}

  /** Takes one use of `kind`; when a cap is reached, the in-band error instead (nothing may run). */
  take(kind: NativeKind): { code: 'max_uses_exceeded'; message: string } | undefined {
    const max = this.set[kind]?.maxUses;
    if (max !== undefined && this.uses[kind] >= max) return { code: 'max_uses_exceeded', message: `The ${NATIVE_NAMES[kind]} tool may be used ${max} times per request.` };
    if (this.uses.search + this.uses.fetch >= this.maxSearches) return { code: 'max_uses_exceeded', message: `At most ${this.maxSearches} searches and fetches per request.` };
    this.uses[kind]++;
    return undefined;
  }
}
