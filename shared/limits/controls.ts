import type { ApiKey, BudgetPeriod } from '../db/models/ApiKey';
import type { Membership } from '../db/models/Membership';
import { backgroundBase } from '../catalog/catalog';
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
  /**
   * The owner's limits on the key's member (docs/keys.md "Member limits"), applied on top of the
   * key's own and counted over all the member's keys in the org; absent or null when the key has no
   * member or the member has none (then nothing on the request path looks further).
   */
  member?: MemberLimits | null;
}

/** What an owner set on a member of an org; null fields are no limit. At least one is set. */
export interface MemberLimits {
  userId: string;
  allowedModels: string[] | null;
  rpm: number | null;
  tpm: number | null;
  budget: Budget | null;
}

export function budgetOf(micros: number | null, period: BudgetPeriod | null): Budget | null {
  return micros === null || micros === undefined ? null : { micros, period: period ?? 'month' };
}

export function keyControls(k: ApiKey, m: Membership | null = null): KeyControls {
  return {
    allowedModels: k.allowedModels ?? null,
    rpm: k.rpm ?? null,
    tpm: k.tpm ?? null,
    budget: budgetOf(k.budgetMicros, k.budgetPeriod),
    expiresAt: k.expiresAt ?? null,
    member: m ? memberLimits(m) : null,
  };
}

/** A membership's limits, or null when it has none. */
export function memberLimits(m: Membership): MemberLimits | null {
  const budget = budgetOf(m.budgetMicros, m.budgetPeriod);
  if (!m.allowedModels && !m.rpm && !m.tpm && !budget) return null;
  return { userId: m.userId, allowedModels: m.allowedModels ?? null, rpm: m.rpm ?? null, tpm: m.tpm ?? null, budget };
}

/** Whether a list of allowed models (null: every model) has `publicId`; `variant` as modelAllowed's. */
function listAllows(allowed: string[] | null | undefined, publicId: string, variant: boolean): boolean {
  return !allowed || allowed.includes(publicId) || (variant && allowed.includes(backgroundBase(publicId)));
}

/**
 * Whether the key may call `publicId`: on the key's list and on its member's (no list: every model).
 * `variant`: the id was resolved as the `-background` variant of its base, which the base allows; a
 * catalog model whose own id ends in `-background` is a model of its own and needs its own entry.
 */
export function modelAllowed(controls: KeyControls | undefined | null, publicId: string, variant = false): boolean {
  return listAllows(controls?.allowedModels, publicId, variant) && listAllows(controls?.member?.allowedModels, publicId, variant);
}

/**
 * 403 model_not_allowed unless the key may call `publicId` (the catalog id after routing-plan
 * aliases; `variant` as modelAllowed's), the key's list first, then its member's. Called while the
 * model is resolved, so before any lane, budget or rate is taken.
 */
export function checkModelAllowed(controls: KeyControls | undefined, publicId: string, requested = publicId, variant = false): void {
  if (modelAllowed(controls, publicId, variant)) return;
  const keyRefuses = !listAllows(controls!.allowedModels, publicId, variant);
  const allowed = (keyRefuses ? controls!.allowedModels! : controls!.member!.allowedModels!).join(', ') || 'none';
  throw new ApiError(403, 'model_not_allowed', keyRefuses
    ? `This API key may not call the model '${requested}'. Allowed: ${allowed}.`
    : `The member this API key belongs to may not call the model '${requested}' (the member's limit, on all their keys in this organization). Allowed: ${allowed}.`);
}
