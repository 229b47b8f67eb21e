import Joi from 'joi';
import type { BudgetPeriod } from '../db/models/ApiKey';
import { isoInstant } from '../iso-instant';

/**
 * The owner's controls on a key as the management API, the dashboard and the CLI take them
 * (snake_case, dollars): one schema, so the three surfaces refuse the same things alike.
 */
export interface KeyControlsInput {
  allowed_models?: string[] | null;
  rpm?: number | null;
  tpm?: number | null;
  budget_usd?: number | null;
  budget_period?: BudgetPeriod;
  expires_at?: string | Date | null;
}

/** The same as stored on `api_keys` (micro-dollars). Absent fields are left as they are. */
export interface KeyControlsRow {
  allowedModels?: string[] | null;
  rpm?: number | null;
  tpm?: number | null;
  budgetMicros?: number | null;
  budgetPeriod?: BudgetPeriod | null;
  expiresAt?: Date | null;
}

export const BUDGET_PERIODS: BudgetPeriod[] = ['day', 'month', 'total'];

export const keyControlsFields = {
  allowed_models: Joi.array().items(Joi.string().trim().min(1).max(200)).max(200).allow(null)
    .description('Public model ids the key may call (a `-background` variant follows its base); null = every model.'),
  rpm: Joi.number().integer().min(1).max(1_000_000_000).allow(null).description('Requests per minute; null = no limit.'),
  tpm: Joi.number().integer().min(1).max(1_000_000_000).allow(null).description('Tokens per minute (input counted before the call, output after); null = no limit.'),
  budget_usd: Joi.number().min(0).max(1_000_000_000).allow(null).description('Spending limit in US dollars per `budget_period`; null = none.'),
  budget_period: Joi.string().valid(...BUDGET_PERIODS).description('`day` (UTC), `month` (UTC) or `total`; default `month`.'),
  expires_at: isoInstant().allow(null).description('ISO 8601 time after which the key answers 401 INVALID_API_KEY; null = never.'),
};

/** The stored form of validated input: dollars to micro-dollars; only the fields given. */
export function controlsRow(input: KeyControlsInput): KeyControlsRow {
  const row: KeyControlsRow = {};
  if (input.allowed_models !== undefined) row.allowedModels = input.allowed_models === null ? null : [...new Set(input.allowed_models)];
  if (input.rpm !== undefined) row.rpm = input.rpm;
  if (input.tpm !== undefined) row.tpm = input.tpm;
  if (input.budget_usd !== undefined) {
    row.budgetMicros = input.budget_usd === null ? null : Math.round(input.budget_usd * 1_000_000);
    if (input.budget_usd !== null) row.budgetPeriod = input.budget_period ?? 'month';
  } else if (input.budget_period !== undefined) row.budgetPeriod = input.budget_period;
  if (input.expires_at !== undefined) row.expiresAt = input.expires_at === null ? null : new Date(input.expires_at);
  return row;
}

/** A key's controls as the API and the CLI show them. */
export function controlsView(k: { allowedModels: string[] | null; rpm: number | null; tpm: number | null; budgetMicros: number | null; budgetPeriod: BudgetPeriod | null; expiresAt: Date | null }) {
  return {
    allowed_models: k.allowedModels ?? null,
    rpm: k.rpm ?? null,
    tpm: k.tpm ?? null,
    budget_usd: k.budgetMicros === null || k.budgetMicros === undefined ? null : k.budgetMicros / 1_000_000,
    budget_period: k.budgetMicros === null || k.budgetMicros === undefined ? null : k.budgetPeriod ?? 'month',
    expires_at: k.expiresAt ? new Date(k.expiresAt).toISOString() : null,
  };
}

const controlsSchema = Joi.object(keyControlsFields);

/**
 * The limits an owner sets on a member (docs/keys.md "Member limits"): a key's controls but its
 * expiry, under the same names, applied to every key the member owns in the org.
 */
const { expires_at: _expiry, ...memberFields } = keyControlsFields;
export const memberLimitsFields = memberFields;
export type MemberLimitsInput = Omit<KeyControlsInput, 'expires_at'>;
export type MemberLimitsRow = Omit<KeyControlsRow, 'expiresAt'>;
const memberSchema = Joi.object(memberLimitsFields);

/** Validates controls from any surface; throws an Error whose message names the field at fault. */
export function validControls(input: KeyControlsInput): KeyControlsRow {
  return validWith(controlsSchema, input);
}

/** Validates a member's limits from any surface, as validControls. */
export function validMemberLimits(input: MemberLimitsInput): MemberLimitsRow {
  return validWith(memberSchema, input);
}

function validWith(schema: Joi.ObjectSchema, input: KeyControlsInput): KeyControlsRow {
  const { error, value } = schema.validate(input, { abortEarly: true, convert: true });
  if (error) throw new Error(error.details[0]?.message ?? error.message);
  return controlsRow(value as KeyControlsInput);
}

/** A member's limits as the API and the CLI show them (a key's names, no expiry). */
export function memberLimitsView(m: { allowedModels: string[] | null; rpm: number | null; tpm: number | null; budgetMicros: number | null; budgetPeriod: BudgetPeriod | null }) {
  // named one by one: a model instance's attributes are getters, which a spread does not copy
  const { expires_at: _none, ...view } = controlsView({ allowedModels: m.allowedModels, rpm: m.rpm, tpm: m.tpm, budgetMicros: m.budgetMicros, budgetPeriod: m.budgetPeriod, expiresAt: null });
  return view;
}
