import type { OrgContext } from '../tenancy/directory';

/**
 * Per-organization capability policies the inference side enforces. The effective value is the
 * org's own policy (`organizations.policies`), else its plan's (`plans.entitlements.policies`, merged
 * into `org.entitlements`), else the platform default below. The management API's
 * `capability-policies` family writes them; the Directory caches them per cache epoch, so a change is
 * seen on the next request on every pod (writers call `bumpEpoch`).
 */
export const CAPABILITY_DEFAULTS = {
  /** Decision models: off (403 systemone_policy_disabled), included (no charge), metered (input tokens). */
  systemone: 'metered' as 'off' | 'included' | 'metered',
  /** Audio transcription for the org: on, or off (403 audio_disabled). */
  audio: 'on' as 'on' | 'off',
  /** Audio billing: included (no charge) or metered (the wallet pays the model's `audio_second` price per second transcribed). */
  audio_billing: 'included' as 'included' | 'metered',
  /** Image generation, edits and uploads for the org: on, or off (503 image_generation_disabled). */
  image_generation: 'on' as 'on' | 'off',
};

export type Capability = keyof typeof CAPABILITY_DEFAULTS;
export type CapabilityValue<C extends Capability> = (typeof CAPABILITY_DEFAULTS)[C];

export const CAPABILITY_VALUES: { [C in Capability]: ReadonlyArray<CapabilityValue<C>> } = {
  systemone: ['off', 'included', 'metered'],
  audio: ['on', 'off'],
  audio_billing: ['included', 'metered'],
  image_generation: ['on', 'off'],
};

function valid<C extends Capability>(cap: C, v: unknown): v is CapabilityValue<C> {
  return (CAPABILITY_VALUES[cap] as ReadonlyArray<unknown>).includes(v);
}

/** The org's effective policy for a capability: org override, else plan, else the platform default. */
export function capabilityPolicy<C extends Capability>(org: OrgContext, cap: C): CapabilityValue<C> {
  const own = org.policies[cap];
  if (valid(cap, own)) return own;
  const planPolicies = org.entitlements.policies as Record<string, unknown> | undefined;
  const fromPlan = planPolicies?.[cap];
  if (valid(cap, fromPlan)) return fromPlan;
  return CAPABILITY_DEFAULTS[cap];
}
