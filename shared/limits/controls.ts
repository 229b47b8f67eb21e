import type { ApiKey, BudgetPeriod } from '../db/models/ApiKey';
import { BACKGROUND_SUFFIX } from '../catalog/catalog';
import { ApiError } from '../errors/ApiError';

/** A spending limit: micro-dollars per UTC day, UTC month, or in total. */
export interface Budget {
  micros: number;
  period: BudgetPeriod;
}

/** What the owner set on a key (docs/keys.md); null fields are no limit. */
export interface KeyControls {
  allowedModels: string[] | null;
  rpm: number | null;
  tpm: number | null;
  budget: Budget | null;
  expiresAt: Date | null;
}

export function budgetOf(micros: number | null, period: BudgetPeriod | null): Budget | null {
  return micros === null || micros === undefined ? null : { micros, period: period ?? 'month' };
}

export function keyControls(k: ApiKey): KeyControls {
  return {
    allowedModels: k.allowedModels ?? null,
    rpm: k.rpm ?? null,
    tpm: k.tpm ?? null,
    budget: budgetOf(k.budgetMicros, k.budgetPeriod),
    expiresAt: k.expiresAt ?? null,
  };
}

/** The public id a `-background` variant follows: an allowed base allows its background variant. */
function baseOf(publicId: string): string {
  return publicId.endsWith(BACKGROUND_SUFFIX) ? publicId.slice(0, -BACKGROUND_SUFFIX.length) : publicId;
}

/**
 * Whether the key may call `publicId` (no list: every model). `variant`: the id was resolved as the
 * `-background` variant of its base, which the base allows; a catalog model whose own id ends in
 * `-background` is a model of its own and needs its own entry.
 */
export function modelAllowed(controls: KeyControls | undefined | null, publicId: string, variant = false): boolean {
  const allowed = controls?.allowedModels;
  return !allowed || allowed.includes(publicId) || (variant && allowed.includes(baseOf(publicId)));
}

/**
 * 403 model_not_allowed unless the key may call `publicId` (the catalog id after routing-plan
 * aliases; `variant` as modelAllowed's). Called while the model is resolved, so before any lane,
 * budget or rate is taken.
 */
export function checkModelAllowed(controls: KeyControls | undefined, publicId: string, requested = publicId, variant = false): void {
  if (modelAllowed(controls, publicId, variant)) return;
  throw new ApiError(403, 'model_not_allowed', `This API key may not call the model '${requested}'. Allowed: ${controls!.allowedModels!.join(', ') || 'none'}.`);
}
