import type { Command } from 'commander';
import { validControls, validMemberLimits, type KeyControlsInput, type KeyControlsRow, type MemberLimitsRow } from '../../shared/limits/key-input';
import { fail } from './with-services';

/** The owner's controls as `gateway key create|update` flags (docs/keys.md). */
export interface KeyControlFlags {
  models?: string;
  rpm?: string;
  tpm?: string;
  budgetUsd?: string;
  budgetPeriod?: string;
  expires?: string;
}

export function keyControlOptions(cmd: Command): Command {
  return limitOptions(cmd, 'the key').option('--expires <iso date>', 'the key stops working at this time (ISO 8601); "" for never');
}

/** `gateway member limits`: the same flags but --expires, on all the member's keys together. */
export function memberLimitOptions(cmd: Command): Command {
  return limitOptions(cmd, 'the member (over all their keys in the org)');
}

function limitOptions(cmd: Command, who: string): Command {
  return cmd
    .option('--models <a,b>', `public model ids ${who} may call, comma-separated (a -background variant follows its base); "" for every model`)
    .option('--rpm <n>', `requests per minute of ${who}, across every pod; 0 for no limit`)
    .option('--tpm <n>', 'tokens per minute (input counted before the call, output from usage); 0 for no limit')
    .option('--budget-usd <x>', 'spending limit in US dollars per --budget-period; "" for none')
    .option('--budget-period <p>', 'day | month | total (UTC days and months; default month)');
}

const none = (v: string) => v.trim() === '';

/** Flags to stored controls; exits with the field at fault when one is invalid. */
export function controlsFromFlags(f: KeyControlFlags): KeyControlsRow {
  return fromFlags(f, validControls);
}

/** Flags to a member's stored limits, as controlsFromFlags. */
export function memberLimitsFromFlags(f: Omit<KeyControlFlags, 'expires'>): MemberLimitsRow {
  return fromFlags(f, validMemberLimits);
}

function fromFlags(f: KeyControlFlags, valid: (input: KeyControlsInput) => KeyControlsRow): KeyControlsRow {
  const input: KeyControlsInput = {};
  if (f.models !== undefined) input.allowed_models = none(f.models) ? null : f.models.split(',').map((s) => s.trim()).filter(Boolean);
  if (f.rpm !== undefined) input.rpm = Number(f.rpm) === 0 ? null : (Number(f.rpm) as number);
  if (f.tpm !== undefined) input.tpm = Number(f.tpm) === 0 ? null : (Number(f.tpm) as number);
  if (f.budgetUsd !== undefined) input.budget_usd = none(f.budgetUsd) ? null : Number(f.budgetUsd);
  if (f.budgetPeriod !== undefined) input.budget_period = f.budgetPeriod as KeyControlsInput['budget_period'];
  if (f.expires !== undefined) input.expires_at = none(f.expires) ? null : f.expires;
  try {
    return valid(input);
  } catch (err) {
    return fail((err as Error).message);
  }
}
